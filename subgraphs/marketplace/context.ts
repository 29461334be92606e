import type { IncomingMessage } from 'node:http';
import type { CursorSigner } from '../kit/cursors.ts';
import type { RestTransport } from '../kit/transport.ts';
import { credentialHeader } from '../kit/server.ts';
import { scopedTransport, type CallScope } from '../kit/callScope.ts';
import { gatewayOriginOf, GATEWAY_ORIGIN_HEADER, type DownloadStore } from '../kit/downloads.ts';
import { CREDENTIAL_HEADERS, createMarketplaceClient, type MarketplaceClient, type MarketplaceCredential } from './client.ts';
import type { MarketplaceConfig } from './config.ts';
import { createLoaders, type MarketplaceLoaders } from './loaders.ts';

/** What a label PDF link stands for, kept server-side under its random id. */
export interface LabelsPdfDownload {
  plpId: string;
  credential: MarketplaceCredential;
}

/** A stored link's value read back (from Redis), or undefined when it is not one. */
export function readLabelsPdfDownload(value: unknown): LabelsPdfDownload | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { plpId, credential } = value as { plpId?: unknown; credential?: unknown };
  if (typeof plpId !== 'string' || !credential || typeof credential !== 'object') return undefined;
  const known: MarketplaceCredential = {};
  for (const field of Object.keys(CREDENTIAL_HEADERS) as (keyof MarketplaceCredential)[]) {
    const given = (credential as Record<string, unknown>)[field];
    if (typeof given === 'string') known[field] = given;
  }
  return { plpId, credential: known };
}

export interface MarketplaceContext {
  client: MarketplaceClient;
  loaders: MarketplaceLoaders;
  /** The caller's credential, kept only to stand behind a download link the caller asks for. */
  credential: MarketplaceCredential;
  downloads: DownloadStore<LabelsPdfDownload>;
  /** The gateway's public origin, for absolute links; undefined when called without the gateway. */
  gatewayOrigin: string | undefined;
  /** Signs the list cursors that carry an upstream token. */
  cursors: CursorSigner;
}

/** What every request's context is built from: shared by the process, holding no caller's data. */
export interface MarketplaceDependencies {
  transport: RestTransport;
  config: MarketplaceConfig;
  downloads: DownloadStore<LabelsPdfDownload>;
  cursors: CursorSigner;
}

const CREDENTIAL_FIELDS = Object.entries(CREDENTIAL_HEADERS) as [keyof MarketplaceCredential, string][];

/**
 * Who owns a label PDF link (its count is per owner): the seller the marketplace checks, as the
 * client sends it. Beside a user token the service reads no e-mail, so e-mails made up per request
 * must not make a new owner each time.
 */
export function linkOwnerOf({ credential: { apiKey, email, userToken } }: LabelsPdfDownload): unknown {
  if (apiKey && email) return { apiKey, email };
  return userToken ? { userToken } : { apiKey };
}

function credentialOf(headers: IncomingMessage['headers']): MarketplaceCredential {
  const credential: MarketplaceCredential = {};
  for (const [field, header] of CREDENTIAL_FIELDS) {
    const value = credentialHeader(headers, header);
    if (value) credential[field] = value;
  }
  return credential;
}

export function clientFor({ transport, config }: MarketplaceDependencies, credential: MarketplaceCredential, scope?: CallScope): MarketplaceClient {
  return createMarketplaceClient({
    transport,
    credential,
    ...(scope ? { scope } : {}),
    apiUrl: config.apiUrl,
    productsApiUrl: config.productsApiUrl,
    marketplace: config.marketplace,
    multipartThresholdBytes: config.multipartThresholdBytes,
  });
}

/** One request's context: the caller's credentials bound into a client, and fresh loaders over it. */
export function makeContext(dependencies: MarketplaceDependencies, headers: IncomingMessage['headers'], scope?: CallScope): MarketplaceContext {
  const credential = credentialOf(headers);
  const client = clientFor({ ...dependencies, transport: scopedTransport(dependencies.transport, scope) }, credential, scope);
  return { client, loaders: createLoaders(client, scope), credential, downloads: dependencies.downloads, gatewayOrigin: gatewayOriginOf(headers[GATEWAY_ORIGIN_HEADER]), cursors: dependencies.cursors };
}
