/**
 * Download links a browser can follow: `GET <gateway>/downloads/<subgraph>/<id>`. The gateway
 * forwards that path to the subgraph as `/downloads/<id>`; the subgraph builds the links on the
 * origin the gateway tells it in GATEWAY_ORIGIN_HEADER.
 */
export const DOWNLOADS_PATH = '/downloads/';

/** The gateway's public origin, sent to subgraphs so they can hand out absolute links. Not a credential. */
export const GATEWAY_ORIGIN_HEADER = 'x-gateway-origin';
