import type DataLoader from 'dataloader';
import { createOnceLoader, createPerKeyLoader, type PerKeyLoaderOptions } from '../kit/loaders.ts';
import { cancelledWith, type CallScope } from '../kit/callScope.ts';
import type { DashboardDto, DashboardsClient, DimensionGroupDto, EnvironmentDto, StatsDto, WidgetDto } from './client.ts';

export interface WidgetKey {
  /** The dashboard's id or slug. */
  dashboard: string;
  id: string;
}

export interface DashboardsLoaders {
  /** Dashboards by id or slug: the service finds them by either. */
  dashboard: DataLoader<string, DashboardDto | null>;
  /** Environments by id or slug: widgets name theirs by slug, so each distinct slug costs one call. */
  environment: DataLoader<string, EnvironmentDto | null>;
  widget: DataLoader<WidgetKey, WidgetDto | null, string>;
  /** The account's stats and the dimension groups: one call each, however many fields ask. */
  stats: DataLoader<'all', StatsDto>;
  dimensionGroups: DataLoader<'all', DimensionGroupDto[]>;
}

/** Caches a resource under both keys it can be asked by, replacing what a write made stale. */
export function remember<T extends { id: string; slug: string }>(loader: DataLoader<string, T | null>, resource: T): T {
  for (const key of new Set([resource.id, resource.slug])) loader.clear(key).prime(key, resource);
  return resource;
}

/** A loader of a resource the service finds by id or by slug; reading it under one key caches it under the other too. */
function byIdOrSlug<T extends { id: string; slug: string }>(fetchOne: (ref: string) => Promise<T | null>, options: PerKeyLoaderOptions<string, string>): DataLoader<string, T | null> {
  const loader: DataLoader<string, T | null> = createPerKeyLoader(async (ref: string) => {
    const found = await fetchOne(ref);
    for (const key of found ? [found.id, found.slug] : []) if (key !== ref) loader.prime(key, found);
    return found;
  }, options);
  return loader;
}

/** Built once per request, so nothing cached here outlives the caller whose credential fetched it. */
export function createLoaders(client: DashboardsClient, scope?: CallScope): DashboardsLoaders {
  const cancellation = cancelledWith(scope, 'dashboards');
  return {
    dashboard: byIdOrSlug((ref) => client.getDashboard(ref), cancellation),
    environment: byIdOrSlug((ref) => client.getEnvironment(ref), cancellation),
    widget: createPerKeyLoader((key: WidgetKey) => client.getWidget(key.dashboard, key.id), { cacheKeyFn: (key) => `${key.dashboard}\u0000${key.id}`, ...cancellation }),
    stats: createOnceLoader(() => client.getStats()),
    dimensionGroups: createOnceLoader(() => client.browseGrouped()),
  };
}
