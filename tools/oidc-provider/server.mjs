// A real authorization server for Ferry's tests: oidc-provider with dynamic client
// registration, PKCE, resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068)
// for the requested MCP server, and the library's development login and consent pages.
//
//   node server.mjs [--scope S]... [--client ID:SECRET]...   listens on 127.0.0.1, a free port
//
// Each --client is a pre-registered confidential client for the client credentials grant
// (client_secret_basic or client_secret_post).
// Prints one line, `issuer http://127.0.0.1:PORT`, once it is ready; stops on SIGTERM or
// when stdin closes. Any login and password sign in (the account id is the login).
import http from 'node:http';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const extraScopes = [];
const clients = [];
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--scope') extraScopes.push(process.argv[++i]);
  if (process.argv[i] === '--client') {
    const [id, secret] = process.argv[++i].split(':');
    clients.push({
      client_id: id,
      client_secret: secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    });
  }
}
for (const client of clients) client.scope = extraScopes.join(' ');

const signing = [];
for (const [alg, kid] of [['ES256', 'es-1'], ['RS256', 'rs-1']]) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  signing.push({ ...(await exportJWK(privateKey)), alg, kid, use: 'sig' });
}

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: signing },
  clients,
  scopes: ['openid', ...extraScopes],
  claims: { openid: ['sub'] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A token is always for one MCP server: the `resource` the client names.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => ({
        scope: extraScopes.join(' '),
        audience: resource,
        accessTokenTTL: 600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  pkce: { required: () => true },
  ttl: { AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600 },
});
provider.proxy = false;
server.on('request', provider.callback());

console.log(`issuer ${issuer}`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
