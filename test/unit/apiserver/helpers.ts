/** Small shared helpers for the apiserver unit tests (not a test file itself). */
import { expect } from 'chai';
import fc from 'fast-check';
import { ApiError } from '../../../apiserver/errors.js';
import { ALL_VERBS, type ResourceDefinition } from '../../../apiserver/resources.js';

/** Runs `fn`, asserting that it throws an ApiError, and returns that error. */
export function catchApiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
  expect.fail('expected an ApiError to be thrown');
}

/** A minimal namespaced kind with a status subresource, overridable per test. */
export function testDef(overrides: Partial<ResourceDefinition> = {}): ResourceDefinition {
  return {
    group: 'cairn.dev',
    version: 'v1alpha1',
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    namespaced: true,
    shortNames: [],
    categories: [],
    hasStatus: true,
    schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    printerColumns: [],
    selectableFields: [],
    verbs: ALL_VERBS,
    ...overrides,
  };
}

/** Arbitrary JSON values (null, booleans, integers, strings, arrays, objects) with keys drawn from `keys`. */
export function jsonValue(keys: fc.Arbitrary<string>, strings: fc.Arbitrary<string> = fc.string(), maxKeys = 5): fc.Arbitrary<unknown> {
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      strings,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(keys, tie('value'), { maxKeys, noNullPrototype: true }),
    ),
  })).value;
}
