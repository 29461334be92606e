import type { Logger } from '../../lib/logger.ts';
import { SERVICE_ENTRY } from '../../lib/services.ts';
import type { SubgraphDataSource } from '../subgraphDataSource.ts';

/** Where a partner's explorer gets a token, as RFC 9728 protected-resource metadata words it. */
export interface ExplorerHints {
  authorization_servers: string[];
  scopes_supported: string[];
  token_endpoint?: string;
  authorization_endpoint?: string;
  /** The explorer's OAuth 2.0 client, registered by the operator on the API gateway. */
  client_id?: string;
  grant_type?: string;
}

const SETTINGS = `query ExplorerHints($api: String!, $consumer: String!) {
  explorerSettings(api: $api, consumer: $consumer) { grantType oauthHost tokenPath authorizePath clientId scopes }
}`;

interface Settings {
  grantType: string | null;
  oauthHost: string;
  tokenPath: string;
  authorizePath: string | null;
  clientId: string | null;
  scopes: string[];
}

export interface ExplorerHintSettings {
  authorizationServers: string[];
  tokenUrl?: string | undefined;
  authorizeUrl?: string | undefined;
  scopes: string[];
  /** With these, the hints are read from the gateway administration service's explorer settings. */
  api?: string | undefined;
  consumer?: string | undefined;
  adminToken?: string | undefined;
}

/**
 * What the graph tells an explorer about getting a token: from the gateway administration service
 * when the operator names the API and the explorer's consumer there (read with the administrator's
 * token, server-side, and remembered a minute), else from configuration. Never a client secret.
 */
export function createExplorerHints(settings: ExplorerHintSettings, adminSource: () => SubgraphDataSource | undefined, logger: Logger, now: () => number = Date.now) {
  const configured: ExplorerHints = {
    authorization_servers: settings.authorizationServers,
    scopes_supported: settings.scopes,
    ...(settings.tokenUrl ? { token_endpoint: settings.tokenUrl } : {}),
    ...(settings.authorizeUrl ? { authorization_endpoint: settings.authorizeUrl } : {}),
  };
  const fromAdmin = settings.api && settings.consumer && settings.adminToken ? { api: settings.api, consumer: settings.consumer, token: settings.adminToken } : undefined;
  let remembered: { hints: ExplorerHints; until: number } | undefined;

  async function read(): Promise<ExplorerHints> {
    const admin = adminSource();
    if (!admin) throw new Error('the graph has no gateway administration subgraph');
    const answer = await admin.send(
      { query: SETTINGS, variables: { api: fromAdmin!.api, consumer: fromAdmin!.consumer } },
      { headers: { [SERVICE_ENTRY.gatewayAdmin.credentialHeaders.adminToken]: fromAdmin!.token } },
    );
    const body = JSON.parse(answer.bytes.toString('utf8')) as { data?: { explorerSettings?: Settings | null }; errors?: { extensions?: { code?: string } }[] };
    const found = body.data?.explorerSettings;
    if (!found) throw new Error(`the gateway administration service has no explorer settings for that API (${body.errors?.[0]?.extensions?.code ?? 'none'})`);
    const host = found.oauthHost.replace(/\/+$/, '');
    return {
      ...configured,
      // A blank OAuth host means the portal's own origin: only configuration can name that one.
      ...(host ? { token_endpoint: `${host}${found.tokenPath}` } : {}),
      ...(host && found.authorizePath ? { authorization_endpoint: `${host}${found.authorizePath}` } : {}),
      scopes_supported: [...new Set([...found.scopes, ...settings.scopes])],
      ...(found.clientId ? { client_id: found.clientId } : {}),
      ...(found.grantType ? { grant_type: found.grantType.toLowerCase() } : {}),
    };
  }

  return {
    async hints(): Promise<ExplorerHints> {
      if (!fromAdmin) return configured;
      if (remembered && remembered.until > now()) return remembered.hints;
      try {
        remembered = { hints: await read(), until: now() + 60_000 };
        return remembered.hints;
      } catch (error) {
        logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'explorer settings unavailable; publishing the configured ones');
        remembered = { hints: configured, until: now() + 5_000 };
        return configured;
      }
    },
  };
}
