import { InvalidArgumentError } from 'commander';
import { expect } from 'chai';
import { jsonPathText, jsonPathValues } from '../../../cli/client/jsonpath.js';
import { conditionMet, metMessage, parseWaitFor } from '../../../cli/client/wait-for.js';

const obj = (generation: number, conditions: object[], phase = 'Running') => ({ metadata: { generation }, status: { phase, conditions } });
const ready = (status: string, observedGeneration?: number) => ({ type: 'Ready', status, reason: 'R', message: '', lastTransitionTime: '', observedGeneration });

describe('parseWaitFor', () => {
  it('reads condition=TYPE[=VALUE], defaulting the value to True', () => {
    expect(parseWaitFor('condition=Ready')).to.deep.equal({ kind: 'condition', type: 'Ready', value: 'True' });
    expect(parseWaitFor('condition=Degraded=false')).to.deep.equal({ kind: 'condition', type: 'Degraded', value: 'false' });
  });

  it('reads delete and jsonpath with or without braces and value', () => {
    expect(parseWaitFor('delete')).to.deep.equal({ kind: 'delete' });
    expect(parseWaitFor('jsonpath={.status.phase}=Running')).to.deep.equal({ kind: 'jsonpath', path: '{.status.phase}', value: 'Running' });
    expect(parseWaitFor('jsonpath=.status.phase=Running')).to.deep.equal({ kind: 'jsonpath', path: '.status.phase', value: 'Running' });
    expect(parseWaitFor('jsonpath={.status.nodeName}')).to.deep.equal({ kind: 'jsonpath', path: '{.status.nodeName}', value: undefined });
    expect(parseWaitFor('jsonpath={.status.conditions[?(@.type=="Ready")].status}=True')).to.deep.equal({
      kind: 'jsonpath',
      path: '{.status.conditions[?(@.type=="Ready")].status}',
      value: 'True',
    });
  });

  for (const bad of ['ready', 'condition=', 'condition=Ready=', 'condition=a=b=c', 'jsonpath={.status.phase', 'jsonpath={.status.phase}Running', 'jsonpath=status.phase=x']) {
    it(`refuses ${JSON.stringify(bad)} with an InvalidArgumentError`, () => {
      expect(() => parseWaitFor(bad)).to.throw(InvalidArgumentError);
    });
  }
});

describe('conditionMet', () => {
  it('matches condition type and value case-insensitively', () => {
    expect(conditionMet(parseWaitFor('condition=ready'), obj(1, [ready('True')]))).to.equal(true);
    expect(conditionMet(parseWaitFor('condition=Ready=false'), obj(1, [ready('False')]))).to.equal(true);
    expect(conditionMet(parseWaitFor('condition=Ready'), obj(1, [ready('False')]))).to.equal(false);
    expect(conditionMet(parseWaitFor('condition=Ready'), obj(1, []))).to.equal(false);
    expect(conditionMet(parseWaitFor('condition=Ready'), undefined)).to.equal(false);
  });

  it('does not count a condition observed for an older generation', () => {
    expect(conditionMet(parseWaitFor('condition=Ready'), obj(3, [ready('True', 2)]))).to.equal(false);
    expect(conditionMet(parseWaitFor('condition=Ready'), obj(3, [ready('True', 3)]))).to.equal(true);
  });

  it('is met for delete only once the object is gone', () => {
    expect(conditionMet({ kind: 'delete' }, undefined)).to.equal(true);
    expect(conditionMet({ kind: 'delete' }, obj(1, []))).to.equal(false);
    expect(metMessage({ kind: 'delete' })).to.equal('deleted');
    expect(metMessage(parseWaitFor('condition=Ready'))).to.equal('condition met');
  });

  it('compares JSONPath values as text, or only requires a match without a value', () => {
    expect(conditionMet(parseWaitFor('jsonpath={.status.phase}=Running'), obj(1, []))).to.equal(true);
    expect(conditionMet(parseWaitFor('jsonpath={.status.phase}=Stopped'), obj(1, []))).to.equal(false);
    expect(conditionMet(parseWaitFor('jsonpath={.metadata.generation}=4'), obj(4, []))).to.equal(true);
    expect(conditionMet(parseWaitFor('jsonpath={.status.conditions[?(@.type=="Ready")].status}=True'), obj(1, [ready('True')]))).to.equal(true);
    expect(conditionMet(parseWaitFor('jsonpath={.status.nodeName}'), obj(1, []))).to.equal(false);
  });
});

describe('jsonPathValues', () => {
  it('evaluates kubectl paths with and without braces', () => {
    const o = { status: { phase: 'Running', replicas: [{ state: 'Ready' }, { state: 'Lost' }] } };
    expect(jsonPathValues('{.status.phase}', o)).to.deep.equal(['Running']);
    expect(jsonPathValues('.status.replicas[*].state', o)).to.deep.equal(['Ready', 'Lost']);
    expect(jsonPathValues('{.status.missing}', o)).to.deep.equal([]);
    expect(jsonPathText(true)).to.equal('true');
  });
});
