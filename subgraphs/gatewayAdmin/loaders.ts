import type DataLoader from 'dataloader';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import { createOnceLoader, createPerKeyLoader } from '../kit/loaders.ts';
import type { ApiDto, ApplicationDto, GatewayAdminClient, PluginDto } from './client.ts';

export interface GatewayAdminLoaders {
  /** APIs by name or id. */
  api: DataLoader<string, ApiDto | null>;
  /** The OAuth 2.0 plugins on an API, by the API's name or id. */
  apiPlugins: DataLoader<string, PluginDto[] | null>;
  /** The OAuth 2.0 plugins that secure every API: one read of the list however many APIs ask. */
  globalPlugins: DataLoader<'all', PluginDto[]>;
  /** A consumer's applications, by username or id. */
  applications: DataLoader<string, ApplicationDto[] | null>;
}

/** Built once per request, so nothing read through one administrator's call outlives it. */
export function createLoaders(client: GatewayAdminClient, scope?: CallScope): GatewayAdminLoaders {
  const cancellation = cancelledWith(scope, 'gatewayAdmin');
  return {
    api: createPerKeyLoader((ref: string) => client.getApi(ref), cancellation),
    apiPlugins: createPerKeyLoader((ref: string) => client.apiOAuth2Plugins(ref), cancellation),
    globalPlugins: createOnceLoader(() => client.globalOAuth2Plugins()),
    applications: createPerKeyLoader((ref: string) => client.applications(ref), cancellation),
  };
}
