/** Small shared helpers for the apiserver unit tests (not a test file itself). */
import { expect } from 'chai';
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
