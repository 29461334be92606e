import { badUserInput } from '../../kit/errors.ts';
import { singleSegment } from '../../kit/paths.ts';
import { maxLength, nonBlank } from '../../kit/validate.ts';
import { OAuthGrant, type PluginDto } from '../client.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/** The plugin serves these below the prefix of every API it secures. */
const TOKEN_PATH = '/oauth2/token';
const AUTHORIZE_PATH = '/oauth2/authorize';
/** Grants whose user is sent to an authorization endpoint; client credentials and password have none. */
const REDIRECTING_GRANTS: readonly OAuthGrant[] = [OAuthGrant.AUTHORIZATION_CODE, OAuthGrant.IMPLICIT];

const name = (value: string, argument: string) => maxLength(nonBlank(value, argument), argument, 128);
/** Checked in full here: the three loads start together, so a check inside one would come after the others' calls. */
const ref = (value: string, argument: string) => singleSegment(name(value, argument), argument);

export const explorerSettingsResolvers: Resolvers = {
  Query: {
    /**
     * The guide's portal settings, read from the gateway: the API, its plugin (its own, else one
     * that secures every API) and the explorer's application, three calls at once.
     */
    explorerSettings: async (_parent, args, context) => {
      const { loaders } = context.admin();
      const apiRef = ref(args.api, 'api');
      const consumer = ref(args.consumer, 'consumer');
      // Only null means "the first application": a blank name is a mistake, and would pick one the caller did not name.
      const applicationName = args.application == null ? undefined : name(args.application, 'application');
      const [api, ownPlugins, applications] = await Promise.all([loaders.api.load(apiRef), loaders.apiPlugins.load(apiRef), loaders.applications.load(consumer)]);
      if (!api) return null;
      const own = ownPlugins?.find((plugin) => plugin.enabled);
      const plugin: PluginDto | undefined = own ?? (await loaders.globalPlugins.load('all')).find((candidate) => candidate.enabled);
      if (!plugin) throw badUserInput('api', `the API '${apiRef}' is not secured with the OAuth 2.0 plugin`);
      // Secured alone, the API's endpoints sit below its own prefix; secured with every API, at the root.
      const prefix = own ? (api.uris[0] ?? '').replace(/\/+$/, '') : '';
      const application = applicationName === undefined ? applications?.[0] : applications?.find((candidate) => candidate.name === applicationName);
      return {
        api,
        grantType: plugin.grants.length === 1 ? plugin.grants[0]! : null,
        grants: plugin.grants,
        oauthHost: context.proxyUrl,
        tokenPath: `${prefix}${TOKEN_PATH}`,
        authorizePath: plugin.grants.some((grant) => REDIRECTING_GRANTS.includes(grant)) ? `${prefix}${AUTHORIZE_PATH}` : null,
        clientId: application?.clientId ?? null,
        scopes: plugin.scopes,
        mandatoryScope: plugin.mandatoryScope,
      };
    },
  },
};
