import { afterAll, expect } from 'vitest';
import { DEMO_TOKENS } from '../../emulators/recognition/data.ts';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { DEMO_TOKEN as DASHBOARDS_DEMO_TOKEN } from '../../emulators/dashboards/data.ts';
import { DEMO_API_KEY as MESSAGING_API_KEY, DEMO_LOGIN as MESSAGING_LOGIN, DEMO_TOKEN as MESSAGING_TOKEN, OTHER_TOKEN as MESSAGING_OTHER_TOKEN } from '../../emulators/messaging/data.ts';
import { DEMO_APIKEY as IMPORTS_DEMO_APIKEY, OTHER_APIKEY as IMPORTS_OTHER_APIKEY, TEAMMATE_APIKEY as IMPORTS_TEAMMATE_APIKEY } from '../../emulators/imports/data.ts';
import { DEMO_ADMIN_TOKEN } from '../../emulators/gatewayAdmin/data.ts';
import { capturedLogs, knownSecrets } from './logs.ts';

// A setup file runs again before each file, but with modules shared between files (the e2e
// project's `isolate: false`) logs.ts is not: each file starts with no lines and no secrets but its own.
capturedLogs.length = 0;
knownSecrets.clear();

for (const token of Object.values(DEMO_TOKENS)) knownSecrets.add(token);
for (const secret of [DEMO_CREDENTIALS.apiKey, DEMO_CREDENTIALS.accountKey, DEMO_CREDENTIALS.userToken]) knownSecrets.add(secret);
knownSecrets.add(DASHBOARDS_DEMO_TOKEN);
for (const secret of [MESSAGING_TOKEN, MESSAGING_OTHER_TOKEN, MESSAGING_API_KEY, MESSAGING_LOGIN.password]) knownSecrets.add(secret);
knownSecrets.add(IMPORTS_DEMO_APIKEY);
knownSecrets.add(IMPORTS_OTHER_APIKEY);
knownSecrets.add(IMPORTS_TEAMMATE_APIKEY);
knownSecrets.add(DEMO_ADMIN_TOKEN);

/** After every end-to-end file: nothing any server logged holds a credential the file used. */
afterAll(() => {
  const text = capturedLogs.join('');
  for (const secret of knownSecrets) {
    expect(text.includes(secret), `a credential appeared in the logs`).toBe(false);
  }
});
