/**
 * `cairn user create NAME --role R [--cluster C]`: a person's or a tool's
 * access. Issues a user token (stored hashed), binds the user to one of the
 * built-in roles — cluster-wide (ClusterRoleBinding) or in one Cluster only
 * (RoleBinding in its namespace) — and writes a kubeconfig for it that
 * kubectl and cairn read as they are.
 */
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { createFileExclusive } from '../../api/atomic-write.js';
import { buildKubeconfig, writeKubeconfig } from '../../apiserver/kubeconfig.js';
import { ApiStatusError } from '../../api/client/errors.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { USER_ROLES as ROLES } from '../../api/names.js';
import { storeToken } from './token.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

interface UserFlags {
  role: string;
  cluster?: string;
  ttl: number;
  output?: string;
  force: boolean;
}

function roleName(role: string): string {
  const short = role.replace(/^cairn:/, '');
  if (!ROLES.includes(short)) throw new CliError(`"${role}" is not a built-in role`, `use one of ${ROLES.join(', ')}; for other roles create a RoleBinding with kubectl`);
  return `cairn:${short}`;
}

/** Binds the user to the role; an existing binding of the same name is kept. Resolves what it names, and how to undo a binding it made. */
async function bind(ctx: ClientContext, user: string, role: string, cluster: string | undefined): Promise<{ what: string; undo?: () => Promise<unknown> }> {
  const kind = cluster ? 'RoleBinding' : 'ClusterRoleBinding';
  const name = `user:${user}:${role.replace(/^cairn:/, '')}`;
  const path = cluster ? `${RBAC}/namespaces/${cluster}/rolebindings` : `${RBAC}/clusterrolebindings`;
  const body = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(cluster ? { namespace: cluster } : {}), labels: { 'cairn.dev/user': user } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
  };
  const what = `${kind.toLowerCase()}.rbac.authorization.k8s.io/${name}${cluster ? ` in ${cluster}` : ''}`;
  try {
    await ctx.rest.request('POST', path, { body });
  } catch (err) {
    if (!(err instanceof ApiStatusError && err.code === 409)) throw err;
    return { what };
  }
  return { what, undo: () => ctx.rest.request('DELETE', `${path}/${encodeURIComponent(name)}`) };
}

/** The CA of the current cluster as PEM, to embed in the new kubeconfig. */
async function currentCa(ctx: ClientContext): Promise<{ caCertPem?: string; insecureSkipTlsVerify?: boolean }> {
  const c = ctx.rest.cluster;
  if (c?.caData) return { caCertPem: Buffer.from(c.caData, 'base64').toString('utf8') };
  if (c?.caFile) return { caCertPem: await fs.readFile(c.caFile, 'utf8') };
  return c?.skipTLSVerify ? { insecureSkipTlsVerify: true } : {};
}

/** Runs `cairn user create NAME`: the token, the binding and the kubeconfig. */
export async function createUser(ctx: ClientContext, name: string): Promise<void> {
  const f = ctx.flags as unknown as UserFlags;
  const role = roleName(f.role);
  const server = ctx.rest.cluster?.server;
  if (!server) throw new CliError('the kubeconfig has no current cluster', 'pass --kubeconfig or --server');
  const file = f.output ?? `${name}.kubeconfig`;
  // Checked before the token exists: a token whose kubeconfig cannot be written is one nobody can use.
  await checkOutput(file, f.force);
  // The binding first: one refused (a mistyped --cluster, no right to bind) must not leave a token behind.
  const binding = await bind(ctx, name, role, f.cluster);
  // A binding this run made goes again when the token cannot be made: it would grant the role to any later token of the name.
  const t = await storeToken(ctx, { type: 'user', user: name, description: `user ${name}, ${role}${f.cluster ? ` in ${f.cluster}` : ''}` }, f.ttl).catch(async (err: unknown) => {
    await binding.undo?.().catch(() => undefined);
    throw err;
  });
  const kubeconfig = buildKubeconfig({ server, token: t.token, user: name, ...(f.cluster ? { namespace: f.cluster } : {}), ...(await currentCa(ctx)) });
  if (f.force) await writeKubeconfig(file, kubeconfig);
  else if (!(await createFileExclusive(file, kubeconfig))) throw existing(file, `token ${t.id} was made meanwhile; revoke it with cairn token revoke ${t.id}`);
  process.stdout.write(`user ${name} created: token ${t.id}${t.expires ? ` (expires ${t.expires})` : ''}, ${binding.what}, kubeconfig ${file}\n`);
}

/** The output file may be written: absent (or --force), in a directory this user can write. */
async function checkOutput(file: string, force: boolean): Promise<void> {
  const exists = await fs.stat(file).then(
    () => true,
    () => false,
  );
  if (exists && !force) throw existing(file, '');
  await fs.access(path.dirname(path.resolve(file)), fsConstants.W_OK).catch(() => {
    throw new CliError(`cannot write the kubeconfig to ${file}: its directory is not writable`, 'pass -o with a path in a directory you can write');
  });
}

function existing(file: string, more: string): CliError {
  return new CliError(`${file} exists; user create does not overwrite a file (it may hold other contexts)`, `pass -o with a new path, or --force to replace it${more ? `; ${more}` : ''}`);
}
