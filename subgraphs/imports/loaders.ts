import type DataLoader from 'dataloader';
import { createPerKeyLoader } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { ImportDto, ImportsClient } from './client.ts';

export interface ImportsLoaders {
  /** Imports by id: the service has no batch read, so each distinct id costs one call per request. */
  import: DataLoader<string, ImportDto | null>;
}

/** Built once per request, so nothing cached here outlives the caller whose key fetched it. */
export function createLoaders(client: ImportsClient, scope?: CallScope): ImportsLoaders {
  return { import: createPerKeyLoader((id: string) => client.getImport(id), cancelledWith(scope, 'imports')) };
}
