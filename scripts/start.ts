import { readLogLevel, runMain } from '../lib/config.ts';
import { createLogger } from '../lib/logger.ts';
import { startStack } from '../stack/startStack.ts';
import { startTracing, stopTracing } from '../lib/tracing.ts';
import { DEMO_STORE_ID as MESSAGING_DEMO_STORE } from '../emulators/messaging/data.ts';
import { DEMO_PARTNER, DEMO_READER } from '../emulators/authorization-server/emulator.ts';

/** `npm start`: the whole graph on emulated upstreams with demo credentials. */
runMain(async () => {
  // Every part in this one process: each part's spans carry its own service name.
  await startTracing(process.env, { serviceName: 'gateway', perService: true });
  const logger = createLogger({ name: 'stack', level: readLogLevel(process.env, 'warn') });
  const stack = await startStack({ env: process.env, logger });
  const curl = `curl -s ${stack.gateway.graphqlUrl} -H 'content-type: application/json' ${Object.entries(stack.demoHeaders)
    .map(([name, value]) => `-H '${name}: ${value}'`)
    .join(' ')}`;
  const lines = [
    '',
    `Gateway:  ${stack.gateway.graphqlUrl}   (open it in a browser for Apollo Sandbox, demo headers preset)`,
    `Dashboard: ${stack.gateway.url}/dashboard   (live recognition events)`,
    `Health:   ${stack.gateway.url}/health   Ready: ${stack.gateway.url}/ready   Metrics: ${stack.gateway.url}/metrics`,
    '',
    ...stack.services.flatMap((service) => [
      `${service.name}:`,
      `  subgraph  ${service.subgraphUrl}`,
      service.emulatorUrl ? `  emulator  ${service.emulatorUrl}  (control: ${service.emulatorUrl}/__emulator/requests)` : `  upstream  ${service.apiUrl}`,
    ]),
    '',
    'Headers to paste into Sandbox (or any client):',
    JSON.stringify(stack.demoHeaders, null, 2),
    '',
    'Try:',
    `  ${curl} -d '{"query":"{ rewardCatalog { name rewards { name } } redemption(id: \\"rd_001\\") { state reward { name displayPrice } } }"}'`,
    `  ${curl} -d '{"query":"{ dashboard(slug: \\"api-health\\") { name widgets { totalCount edges { node { title environment { name isDefault } } } } } dashboardStats { quotaRemaining } }"}'`,
    ...stack.services
      .filter((service) => service.name === 'imports' && service.emulatorUrl)
      .map((service) => `  ${curl} -d '{"query":"mutation { createImport(input: { apiId: \\"api_1001\\", fileLocation: \\"${service.emulatorUrl}/__emulator/files/petstore.json\\" }) { id status } }"}'`),
    '',
    'Subscriptions (graphql-ws on the same URL as ws://…/graphql with the headers as connectionParams, or SSE with Accept: text/event-stream):',
    '  subscription { bonusCreated { occurredAt bonus { hashtag reason giver { displayName } receivers { displayName } } } }',
    ...stack.services
      .filter((service) => service.name === 'recognition' && service.emulatorUrl)
      .map((service) => `  then give a bonus:  curl -s -X POST ${service.emulatorUrl}/__emulator/bonuses -H 'content-type: application/json' -d '{"hashtag":"#shipit"}'`),
    `  subscription { subscriberStatusChanged(filter: { storeId: "${MESSAGING_DEMO_STORE}" }) { succeeded mobileId subscriberStatus } }`,
    ...stack.services
      .filter((service) => service.name === 'messaging' && service.emulatorUrl)
      .map((service) => `  then reply YES from a handset:  curl -s -X POST ${service.emulatorUrl}/__emulator/inbound -H 'content-type: application/json' -d '{"from":"+15550000003","body":"YES"}'`),
    '  subscription { importStatusChanged(id: "imp_0001") { status statusText final messages } }',
    ...stack.services
      .filter((service) => service.name === 'imports' && service.emulatorUrl)
      .map((service) => `  then finish the job:  curl -s -X POST ${service.emulatorUrl}/__emulator/clock -H 'content-type: application/json' -d '{"advanceMs":3000}'`),
    '',
  ];
  if (stack.authorizationServerUrl) {
    const token = `curl -s -u ${DEMO_PARTNER.clientId}:${DEMO_PARTNER.clientSecret} -d grant_type=client_credentials ${stack.authorizationServerUrl}/oauth2/token`;
    lines.push(
      'GATEWAY_AUTH=oauth2: the graph wants a bearer token, and holds the demo partner\'s service credentials itself.',
      `  Authorization server (demo): ${stack.authorizationServerUrl}   Token: ${stack.authorizationServerUrl}/oauth2/token`,
      `  Get a token:  ${token}`,
      `  In Sandbox, set one header: Authorization: Bearer <access_token>   (a read-only partner: ${DEMO_READER.clientId}:${DEMO_READER.clientSecret})`,
      `  What a client needs to know: ${stack.gateway.url}/.well-known/oauth-protected-resource`,
      '',
    );
  }
  console.log(lines.join('\n'));
  const stop = () => {
    stack.close().finally(() => stopTracing().finally(() => process.exit(0)));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
});
