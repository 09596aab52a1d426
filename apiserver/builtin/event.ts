/**
 * Core v1 Event as kube-apiserver serves it: namespaced, no status
 * subresource, with the field selectors `kubectl describe` and
 * `kubectl get events --field-selector` use. Events expire after a TTL.
 */
import { ALL_VERBS, type JSONSchemaProps, type ResourceDefinition } from '../resources.js';

// Go's decoder treats JSON null as "unset"; client-go sends null for zero times, so accept it.
const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const time = (description: string): JSONSchemaProps => ({ type: 'string', format: 'date-time', nullable: true, description });

const objectReference = (description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  properties: {
    kind: str('Kind of the referent.'),
    namespace: str('Namespace of the referent.'),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
    apiVersion: str('API version of the referent.'),
    resourceVersion: str('Specific resourceVersion to which this reference is made, if any.'),
    fieldPath: str('If referring to a piece of an object instead of an entire object, a JSON path to it, e.g. spec.containers{name}.'),
  },
});

const eventSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Event is a report of an event somewhere in the cluster: what happened to which object, and why.',
  required: ['metadata', 'involvedObject'],
  properties: {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object: v1.'),
    kind: str('Kind is a string value representing the REST resource this object represents: Event.'),
    metadata: { type: 'object', description: "Standard object's metadata." },
    involvedObject: objectReference('The object that this event is about.'),
    reason: str('This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status, in CamelCase.'),
    message: str('A human-readable description of the status of this operation.'),
    source: {
      type: 'object',
      description: 'The component reporting this event. Should be a short machine understandable string.',
      properties: {
        component: str('Component from which the event is generated.'),
        host: str('Node name on which the event is generated.'),
      },
    },
    firstTimestamp: time('The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
    lastTimestamp: time('The time at which the most recent occurrence of this event was recorded.'),
    count: { type: 'integer', format: 'int32', description: 'The number of times this event has occurred.' },
    type: str('Type of this event (Normal, Warning); new types could be added in the future.'),
    eventTime: time('Time when this Event was first observed (a MicroTime: RFC 3339 with microseconds).'),
    series: {
      type: 'object',
      nullable: true,
      description: 'Data about the Event series this event represents or nil if it\'s a singleton Event.',
      properties: {
        count: { type: 'integer', format: 'int32', description: 'Number of occurrences in this series up to the last heartbeat time.' },
        lastObservedTime: time('Time of the last occurrence observed (a MicroTime).'),
      },
    },
    action: str('What action was taken/failed regarding to the involved object.'),
    related: { ...objectReference('Optional secondary object for more complex actions.'), nullable: true },
    reportingComponent: str('Name of the controller that emitted this Event, e.g. cairn.dev/controller.'),
    reportingInstance: str('ID of the controller instance, e.g. the controller\'s identity or the agent\'s node name.'),
  },
};

/** The Event kind of the core v1 group. */
export const eventDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  hasStatus: false,
  schema: eventSchema,
  printerColumns: [
    { name: 'Last Seen', type: 'date', jsonPath: '.lastTimestamp', description: 'Time of the most recent occurrence.' },
    { name: 'Type', type: 'string', jsonPath: '.type', description: 'Normal or Warning.' },
    { name: 'Reason', type: 'string', jsonPath: '.reason', description: 'Short CamelCase reason.' },
    { name: 'Object', type: 'string', jsonPath: '.involvedObject.name', description: 'Name of the object the event is about.' },
    { name: 'Kind', type: 'string', jsonPath: '.involvedObject.kind', description: 'Kind of the object the event is about.', priority: 1 },
    { name: 'Source', type: 'string', jsonPath: '.source.component', description: 'Component that reported the event.', priority: 1 },
    { name: 'First Seen', type: 'date', jsonPath: '.firstTimestamp', description: 'Time of the first occurrence.', priority: 1 },
    { name: 'Count', type: 'integer', jsonPath: '.count', description: 'Number of occurrences.', priority: 1 },
    { name: 'Message', type: 'string', jsonPath: '.message', description: 'Human-readable description.' },
  ],
  // As kube's event field selectors; `source` selects on source.component.
  selectableFields: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  verbs: ALL_VERBS,
};
