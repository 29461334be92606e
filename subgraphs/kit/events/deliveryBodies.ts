import busboy from 'busboy';
import { DeliveryRejected, refuseDeepJson } from './webhookReceiver.ts';

/** Fields one delivery may carry: callbacks send about ten. */
const MAX_FIELDS = 100;

/**
 * A delivery's body by its content type: multipart/form-data (busboy), urlencoded, or else JSON
 * (whatever the type says: text/plain, none). The receiver has already bounded the bytes; this
 * bounds the fields and the nesting of JSON, and ignores file parts.
 */
export async function decodeDeliveryBody(raw: Buffer, contentType: string): Promise<unknown> {
  const type = contentType.toLowerCase();
  if (type.startsWith('multipart/form-data')) return multipartFields(raw, contentType);
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const params = new URLSearchParams(raw.toString('utf8'));
    const fields: Record<string, string> = {};
    let count = 0;
    for (const [name, value] of params) {
      if ((count += 1) > MAX_FIELDS) throw new DeliveryRejected(400, `more than ${MAX_FIELDS} fields`);
      fields[name] = value;
    }
    return fields;
  }
  refuseDeepJson(raw, 'body');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new DeliveryRejected(400, 'body is not JSON, urlencoded or multipart form data');
  }
}

function multipartFields(raw: Buffer, contentType: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fields: MAX_FIELDS, files: 0, parts: MAX_FIELDS, fieldSize: raw.length } });
    } catch {
      reject(new DeliveryRejected(400, 'multipart body without a usable boundary'));
      return;
    }
    const fields: Record<string, string> = {};
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('fieldsLimit', () => reject(new DeliveryRejected(400, `more than ${MAX_FIELDS} fields`)));
    parser.on('partsLimit', () => reject(new DeliveryRejected(400, `more than ${MAX_FIELDS} parts`)));
    parser.on('error', () => reject(new DeliveryRejected(400, 'malformed multipart body')));
    parser.on('close', () => resolve(fields));
    parser.end(raw);
  });
}
