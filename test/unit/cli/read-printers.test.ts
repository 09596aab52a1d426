import { expect } from 'chai';
import { resourceInfo } from './resource-fixtures.js';
import YAML from 'yaml';
import { ResourceCatalog } from '../../../cli/client/catalog.js';
import { CliError } from '../../../cli/client/errors.js';
import { resolveKindArgs } from '../../../cli/client/kind-args.js';
import { asList, documentFormatter, kindName, noResourcesMessage, ObjectStream, resourceName } from '../../../cli/client/printers.js';
import { parseOutputFormat } from '../../../cli/client/verb-flags.js';

const res = resourceInfo;

const instances = res('cairn.dev', 'instances', 'Instance', { shortNames: ['inst'], categories: ['cairn'] });
const volumes = res('cairn.dev', 'volumes', 'Volume', { shortNames: ['vol'], categories: ['cairn'] });
const events = res('', 'events', 'Event', { shortNames: ['ev'] });
const catalog = new ResourceCatalog([instances, volumes, events]);
const web = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'web', finalizers: ['cairn.dev/controller'] } };

describe('output formats', () => {
  it('names objects kind.group/name, core kinds without a group', () => {
    expect(resourceName(instances, 'web')).to.equal('instance.cairn.dev/web');
    expect(kindName(events)).to.equal('event');
  });

  it('prints several objects as a v1 List, YAML sequences unindented as kubectl does', async () => {
    const text = (await documentFormatter('yaml'))(asList([web]));
    expect(text).to.contain('apiVersion: v1\nkind: List\nitems:\n- apiVersion: cairn.dev/v1alpha1');
    expect(text).to.contain('    finalizers:\n    - cairn.dev/controller');
    expect(YAML.parse(text)).to.deep.equal({ apiVersion: 'v1', kind: 'List', items: [web], metadata: { resourceVersion: '' } });
  });

  it('prints JSON with 4-space indentation and a final newline', async () => {
    expect((await documentFormatter('json'))({ a: 1 })).to.equal('{\n    "a": 1\n}\n');
  });

  it('refuses an unknown -o with the allowed formats', () => {
    expect(parseOutputFormat('wide')).to.equal('wide');
    expect(() => parseOutputFormat('jsonpath')).to.throw(/allowed formats are: table,wide,yaml,json,name/);
  });

  it('says where nothing was found, as kubectl', () => {
    expect(noResourcesMessage('demo')).to.equal('No resources found in demo namespace.');
    expect(noResourcesMessage(undefined)).to.equal('No resources found');
  });

  it('streams YAML documents separated by ---, names one a line', async () => {
    const yaml = await ObjectStream.open('yaml');
    expect(yaml.print(instances, web)).to.not.contain('---');
    expect(yaml.print(instances, web)).to.match(/^---\napiVersion/);
    expect((await ObjectStream.open('name')).print(instances, web)).to.equal('instance.cairn.dev/web\n');
  });
});

describe('resolveKindArgs', () => {
  it('reads KIND NAME... with comma-separated kinds and categories, each kind once', () => {
    const targets = resolveKindArgs(catalog, ['inst,cairn', 'web', 'db'], 'get');
    expect(targets.map((t) => t.r.plural)).to.deep.equal(['instances', 'volumes']);
    expect(targets.every((t) => t.names.join() === 'web,db')).to.equal(true);
  });

  it('reads KIND/NAME pairs, grouping names by kind', () => {
    const targets = resolveKindArgs(catalog, ['inst/web', 'vol/data', 'instance/db'], 'get');
    expect(targets.map((t) => [t.r.plural, t.names])).to.deep.equal([
      ['instances', ['web', 'db']],
      ['volumes', ['data']],
    ]);
  });

  it('refuses mixing the two forms, and unknown kinds, in kubectl\'s words', () => {
    expect(() => resolveKindArgs(catalog, ['inst', 'inst/web'], 'get')).to.throw(CliError, /there is no need to specify a resource type as a separate argument/);
    expect(() => resolveKindArgs(catalog, ['pods'], 'get')).to.throw(CliError, `the server doesn't have a resource type "pods"`);
    expect(() => resolveKindArgs(catalog, [], 'describe')).to.throw(CliError, 'you must specify the type of resource to describe');
    for (const empty of [',', '', ',,']) expect(() => resolveKindArgs(catalog, [empty], 'get'), `"${empty}"`).to.throw(CliError, 'you must specify the type of resource to get');
  });
});
