/**
 * Protobuf message types written as field tables (name → type and number,
 * as a .proto file states them), for protobufjs: the Kubernetes kinds of
 * protobuf.ts and gnostic's OpenAPI v2 document of openapi-v2.ts.
 */
import protobuf from 'protobufjs';

/** One message's fields by name. */
export type ProtoFields = Record<string, { type: string; id: number; rule?: 'repeated'; keyType?: string }>;

/** `optional <type> <name> = <id>`. */
export const field = (type: string, id: number) => ({ type, id });
/** `repeated <type> <name> = <id>`. */
export const repeated = (type: string, id: number) => ({ type, id, rule: 'repeated' as const });
/** `map<string, <type>> <name> = <id>`. */
export const stringMap = (type: string, id: number) => ({ type, id, keyType: 'string' });

/** The messages as one protobufjs root, to look types up in. */
export function protoRoot(messages: Record<string, ProtoFields>): protobuf.Root {
  return protobuf.Root.fromJSON({ nested: Object.fromEntries(Object.entries(messages).map(([name, fields]) => [name, { fields }])) });
}
