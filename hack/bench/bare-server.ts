/**
 * The floor under `npm run bench`'s create figure: a bare Node.js HTTPS
 * server doing only what any API server with a watch cache must do for a
 * create. It reads and parses the body, sends one compare-and-put
 * transaction through the API server's own thin write client, and answers
 * 201 with the object. It also keeps what it wrote in memory from an etcd
 * watch, decoded as the watch cache decodes it.
 *
 * It has no authentication, admission, validation, audit, metrics or
 * priority levels: the gap between it and `cairn apiserver` in the same
 * run is what those cost; the gap between it and raw etcd3 puts is what
 * TLS, HTTP and the watch cost on this machine.
 *
 * Usage: `node dist/hack/bench/bare-server.js <etcd endpoint> <cert file> <key file>`;
 * prints the port it listens on (127.0.0.1) as its first line, and stores
 * under /bench-bare/.
 */
import fs from 'node:fs';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { etcdHostPolicy } from '../../apiserver/etcd/fault-handling.js';
import { ThinTxnClient } from '../../apiserver/etcd/txn-client.js';
import { decode, encode, type KubeObject } from '../../apiserver/storage/codec.js';

const PREFIX = '/bench-bare/';

async function main(): Promise<void> {
  const [endpoint, certFile, keyFile] = process.argv.slice(2);
  if (!endpoint || !certFile || !keyFile) throw new Error('usage: bare-server <etcd endpoint> <cert file> <key file>');
  const writes = new ThinTxnClient([endpoint], () => etcdHostPolicy((cause) => cause as Error));
  const cache = new Map<string, KubeObject>();
  const watcher = await new Etcd3({ hosts: endpoint }).watch().prefix(PREFIX).create();
  watcher.on('data', (res) => {
    for (const e of res.events) cache.set(e.kv.key.toString(), decode(e.kv.value, e.kv.mod_revision));
  });
  const server = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      create(writes, JSON.parse(Buffer.concat(chunks).toString()) as KubeObject).then(
        ([status, body]) => {
          res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
          res.end(body);
        },
        (err: Error) => {
          res.writeHead(500);
          res.end(err.message);
        },
      );
    });
  });
  server.keepAliveTimeout = 65_000; // as the apiserver's: the bench's pooled connections wait idle between phases
  server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
}

// What every create does: identity fields, one compare-and-put, the object as stored.
async function create(writes: ThinTxnClient, obj: KubeObject): Promise<[number, string]> {
  Object.assign(obj.metadata, { uid: randomUUID(), creationTimestamp: new Date().toISOString(), generation: 1 });
  const key = `${PREFIX}${obj.metadata.namespace}/${obj.metadata.name}`;
  const out = await writes.txnIfMod({ key: Buffer.from(key), modRevision: 0, then: { put: Buffer.from(encode(obj)) } });
  if (!out.succeeded) return [409, '{}'];
  obj.metadata.resourceVersion = String(out.revision);
  return [201, JSON.stringify(obj)];
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
