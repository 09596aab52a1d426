/**
 * Every kind the apiserver serves, looked up by URL (group, version,
 * plural), with each kind's compiled schema validator.
 */
import { compileValidator, createAjv, type ObjectValidator } from './validation/schema-validator.js';
import { groupVersion, type ResourceDefinition } from './resources.js';

/** The served kinds and their validators. */
export class Registry {
  private readonly validators = new Map<ResourceDefinition, ObjectValidator>();

  constructor(readonly defs: ResourceDefinition[]) {
    const ajv = createAjv();
    for (const def of defs) this.validators.set(def, compileValidator(ajv, def.schema));
  }

  /** The kind served at `/apis/<group>/<version>/<plural>`, if any. */
  find(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.defs.find((d) => d.group === group && d.version === version && d.plural === plural);
  }

  /** The compiled schema of a kind. */
  validator(def: ResourceDefinition): ObjectValidator {
    return this.validators.get(def)!;
  }

  /** Kinds served under one group/version. */
  inGroupVersion(gv: string): ResourceDefinition[] {
    return this.defs.filter((d) => groupVersion(d) === gv);
  }

  /** Every named API group (not core) with its versions. */
  groups(): { name: string; versions: string[] }[] {
    const out = new Map<string, Set<string>>();
    for (const d of this.defs) if (d.group) (out.get(d.group) ?? out.set(d.group, new Set()).get(d.group)!).add(d.version);
    return [...out].map(([name, versions]) => ({ name, versions: [...versions] }));
  }
}
