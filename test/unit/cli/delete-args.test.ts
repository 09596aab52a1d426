import { expect } from 'chai';
import { parseDeleteArgs, type DeleteRequest, type DeleteSelection } from '../../../cli/client/delete-args.js';
import { CliError } from '../../../cli/client/errors.js';
import { catalog } from './apply-fixtures.js';

const none: DeleteSelection = { files: false, all: false, allNamespaces: false };

// The request with each target as `plural:name,name`.
function summary(req: DeleteRequest): unknown {
  if (req.mode === 'files') return req;
  return { ...req, targets: req.targets.map((t) => `${t.r.plural}:${t.names.join(',')}`) };
}

describe('parseDeleteArgs', () => {
  it('reads KIND NAME..., KIND,KIND NAME and KIND/NAME...', () => {
    expect(summary(parseDeleteArgs(catalog, ['instance', 'a', 'b'], none))).to.deep.equal({ mode: 'names', targets: ['instances:a,b'] });
    expect(summary(parseDeleteArgs(catalog, ['instances,volumes', 'a'], none))).to.deep.equal({ mode: 'names', targets: ['instances:a', 'volumes:a'] });
    expect(summary(parseDeleteArgs(catalog, ['instance/a', 'volume/b'], none))).to.deep.equal({ mode: 'names', targets: ['instances:a', 'volumes:b'] });
  });

  it('reads KIND -l SELECTOR and KIND --all (a category names each of its namespaced kinds)', () => {
    expect(summary(parseDeleteArgs(catalog, ['instances'], { ...none, selector: 'app=x' }))).to.deep.equal({ mode: 'selection', targets: ['instances:'], selector: 'app=x' });
    const all = summary(parseDeleteArgs(catalog, ['cairn'], { ...none, all: true, allNamespaces: true })) as { targets: string[] };
    expect(all.targets).to.deep.equal(['nodes:', 'instances:', 'volumes:', 'workitems:']);
  });

  it('selects Clusters only when they are named, never through a category', () => {
    const named = summary(parseDeleteArgs(catalog, ['clusters,cairn'], { ...none, all: true })) as { targets: string[] };
    expect(named.targets).to.include('clusters:');
  });

  it('reads -f without arguments', () => {
    expect(parseDeleteArgs(catalog, [], { ...none, files: true })).to.deep.equal({ mode: 'files' });
    expect(() => parseDeleteArgs(catalog, ['instance', 'a'], { ...none, files: true })).to.throw(CliError, 'Unexpected args: [instance a]');
  });

  const refused: [string, string[], Partial<DeleteSelection>, string][] = [
    ['nothing', [], {}, 'You must provide one or more resources by argument or filename.'],
    ['a kind without names', ['instance'], {}, 'resource(s) were provided, but no name was specified'],
    ['names with a selector', ['instance', 'a'], { selector: 'app=x' }, 'name cannot be provided when a selector is specified'],
    ['names with --all', ['instance', 'a'], { all: true }, 'names cannot be provided together with --all'],
    ['--all with a selector', ['instance'], { all: true, selector: 'a=b' }, 'cannot set --all and --selector at the same time'],
    ['a kind before KIND/NAME', ['instance', 'instance/a'], {}, 'there is no need to specify a resource type as a separate argument'],
    ['names across all namespaces', ['instance', 'a'], { allNamespaces: true }, 'a resource cannot be retrieved by name across all namespaces'],
    ['a kind the server does not serve', ['pods', 'a'], {}, `the server doesn't have a resource type "pods"`],
  ];
  for (const [what, args, sel, message] of refused) {
    it(`refuses ${what}`, () => {
      expect(() => parseDeleteArgs(catalog, args, { ...none, ...sel })).to.throw(CliError, message);
    });
  }
});
