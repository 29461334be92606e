/** Demo accounts, APIs and sample descriptions of the imports emulator: seeded, deterministic. */

/** The demo account's API key (`npm start` presets it in Sandbox as `x-imports-apikey`). */
export const DEMO_APIKEY = 'demo-imports-apikey-2c7e9a4f1b8d6e3a';
/** A second key of the demo account (a teammate's): it sees the same APIs and imports. */
export const TEAMMATE_APIKEY = 'demo-imports-teammate-apikey-4a8c2e6f0b1d3e5a';
/** A second account's key: its imports are another account's, so the demo key cannot read them, nor it the demo's. */
export const OTHER_APIKEY = 'demo-imports-other-apikey-7d1f4b9e3c6a2e8b';

export interface EmulatedApi {
  id: string;
  account: string;
  name: string;
  /** Version ids an import may overwrite (`api_version_id`). */
  versions: string[];
}

export interface ImportOutcome {
  status: 'completed' | 'failed';
  message: string;
}

export interface EmulatedImport {
  id: string;
  account: string;
  apiId: string;
  fileLocation: string;
  apiVersionId: string | null;
  /** On the emulator's clock: the job shows `in_progress` until then. */
  createdAt: number;
  readyAt: number;
  /**
   * The file is fetched and parsed in the background from the moment the job is created; the
   * outcome is shown once `readyAt` has passed (a read then waits for the work if it is not done).
   */
  outcome: Promise<ImportOutcome>;
  /** Set through the control surface: what the job shows instead, whatever the clock says. */
  forced?: { status: string; message: string };
}

export interface ImportsState {
  apis: EmulatedApi[];
  imports: EmulatedImport[];
  nextImport: number;
  nextVersion: number;
}

export const ACCOUNTS: Readonly<Record<string, string>> = { [DEMO_APIKEY]: 'acc_demo', [TEAMMATE_APIKEY]: 'acc_demo', [OTHER_APIKEY]: 'acc_other' };

export function seedImports(): ImportsState {
  return {
    apis: [
      { id: 'api_1001', account: 'acc_demo', name: 'Pet store', versions: ['ver_101'] },
      { id: 'api_1002', account: 'acc_demo', name: 'Payments', versions: [] },
      { id: 'api_2001', account: 'acc_other', name: 'Other account API', versions: ['ver_201'] },
    ],
    imports: [],
    nextImport: 1,
    nextVersion: 300,
  };
}

const petstore = {
  swagger: '2.0',
  info: { title: 'Pet store', version: '1.0.0', description: 'A sample API of the imports emulator.' },
  host: 'petstore.example',
  basePath: '/v1',
  schemes: ['https'],
  produces: ['application/json'],
  paths: {
    '/pets': {
      get: { operationId: 'listPets', parameters: [{ name: 'limit', in: 'query', type: 'integer', required: false }], responses: { '200': { description: 'The pets', schema: { type: 'array', items: { $ref: '#/definitions/Pet' } } } } },
      post: { operationId: 'createPet', parameters: [{ name: 'pet', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }], responses: { '201': { description: 'Created' } } },
    },
    '/pets/{petId}': {
      get: { operationId: 'getPet', parameters: [{ name: 'petId', in: 'path', type: 'string', required: true }], responses: { '200': { description: 'One pet', schema: { $ref: '#/definitions/Pet' } }, '404': { description: 'No such pet' } } },
    },
  },
  definitions: { Pet: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' }, tag: { type: 'string' } } } },
};

/** The sample descriptions served under `/__emulator/files/`, by file name. */
export const SAMPLE_FILES: Readonly<Record<string, { contentType: string; text: string }>> = {
  'petstore.json': { contentType: 'application/json', text: `${JSON.stringify(petstore, null, 2)}\n` },
  'orders.yaml': {
    contentType: 'application/yaml',
    text: `swagger: "2.0"
info:
  title: Orders
  version: 2.1.0
basePath: /orders/v2
consumes: [application/json]
produces: [application/json]
paths:
  /orders:
    get:
      operationId: listOrders
      responses:
        "200":
          description: The orders
  /orders/{orderId}:
    get:
      operationId: getOrder
      parameters:
        - name: orderId
          in: path
          required: true
          type: string
      responses:
        "200":
          description: One order
        "404":
          description: No such order
`,
  },
  'no-base-path.yaml': {
    contentType: 'application/yaml',
    text: `swagger: "2.0"
info:
  title: Inventory (no base path)
  version: 0.3.0
paths:
  /items:
    get:
      responses:
        "200":
          description: The items
`,
  },
  'broken.yaml': {
    contentType: 'application/yaml',
    text: `swagger: "2.0"
info:
  title: Broken on purpose
basePath: /broken
paths:
  /things:
    get:
      responses:
        "200":
          schema:
            type: array
`,
  },
};
