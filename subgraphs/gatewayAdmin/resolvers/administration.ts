import { badUserInput } from '../../kit/errors.ts';
import { singleSegment } from '../../kit/paths.ts';
import { httpUrl, listSize, maxLength, nonBlank } from '../../kit/validate.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

/** Bounds of our own: the admin interface documents none, and one request must not make it store megabytes. */
const MAX_NAME = 128;
const MAX_URIS = 16;
const MAX_URI = 256;
const MAX_SCOPES = 64;
const MAX_SCOPE = 64;
/** Scopes travel comma-separated to the admin interface and space-separated in token requests. */
const SCOPE = /^[^\s,]+$/;

const name = (value: string, argument: string) => maxLength(nonBlank(value, argument), argument, MAX_NAME);
/** A name the client puts in a path: checked here, where the refusal can name the GraphQL argument (the client knows only its placeholder). */
const pathName = (value: string, argument: string) => singleSegment(name(value, argument), argument);

export const administrationResolvers: Resolvers = {
  Mutation: {
    registerApi: (_parent, { input }, context) => {
      const { client } = context.admin();
      listSize(input.uris, 'input.uris', MAX_URIS);
      if (input.uris.length === 0) throw badUserInput('input.uris', 'needs at least one URI');
      input.uris.forEach((uri, index) => {
        const argument = `input.uris[${index}]`;
        maxLength(nonBlank(uri, argument), argument, MAX_URI);
        if (uri.includes(',')) throw badUserInput(argument, 'must not hold a comma: URIs travel comma-separated');
      });
      return client.registerApi({ name: name(input.name, 'input.name'), uris: input.uris, upstreamUrl: httpUrl(input.upstreamUrl, 'input.upstreamUrl') });
    },
    createConsumer: (_parent, { input }, context) => context.admin().client.createConsumer({ username: name(input.username, 'input.username') }),
    createOAuthApplication: (_parent, { input }, context) => {
      const { client } = context.admin();
      // The admin interface reads a comma as a list separator: one URI must hold none.
      if (input.redirectUri.includes(',')) throw badUserInput('input.redirectUri', 'must not hold a comma');
      return client.createApplication(pathName(input.consumer, 'input.consumer'), { name: name(input.name, 'input.name'), redirectUri: httpUrl(input.redirectUri, 'input.redirectUri') });
    },
    enableOAuth2: (_parent, { input }, context) => {
      const { client } = context.admin();
      const scopes = input.scopes ?? [];
      listSize(scopes, 'input.scopes', MAX_SCOPES);
      scopes.forEach((scope, index) => {
        if (!SCOPE.test(scope)) throw badUserInput(`input.scopes[${index}]`, 'must not be empty or hold spaces or commas');
        maxLength(scope, `input.scopes[${index}]`, MAX_SCOPE);
      });
      return client.enableOAuth2(pathName(input.api, 'input.api'), {
        scopes,
        grant: input.grant,
        mandatoryScope: input.mandatoryScope ?? false,
        acceptHttpIfAlreadyTerminated: input.acceptHttpIfAlreadyTerminated ?? false,
      });
    },
  },
};
