/**
 * Every kind the apiserver serves, looked up by URL (group, version,
 * plural), with each kind's compiled schema validator.
 */
import type { Ajv } from 'ajv';
import { compileValidator, createAjv, type ObjectValidator } from './validation/schema-validator.js';
import { groupVersion, type ResourceDefinition } from './resources.js';

/**
 * Validators compiled in this process, by schema text, and the ajv they share. A kind is compiled when
 * first written, not at start-up: compiling every kind took a fifth of a server's start, and a process
 * that serves several apiservers (the in-process test servers) compiled each kind once per server.
 */
const compiled = new Map<string, ObjectValidator>();
let sharedAjv: Ajv | undefined;

/** The served kinds and their validators. */
export class Registry {
  private readonly validators = new Map<ResourceDefinition, ObjectValidator>();

  constructor(readonly defs: ResourceDefinition[]) {}

  /** The kind served at `/apis/<group>/<version>/<plural>`, if any. */
  find(group: string, version: string, plural: string): ResourceDefinition | undefined {
    return this.defs.find((d) => d.group === group && d.version === version && d.plural === plural);
  }

  /** The compiled schema of a kind. */
  validator(def: ResourceDefinition): ObjectValidator {
    let validate = this.validators.get(def);
    if (!validate) {
      const key = JSON.stringify(def.schema);
      validate = compiled.get(key);
      if (!validate) compiled.set(key, (validate = compileValidator((sharedAjv ??= createAjv()), def.schema)));
      this.validators.set(def, validate);
    }
    return validate;
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
