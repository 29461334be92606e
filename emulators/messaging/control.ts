/**
 * The emulator's way to set a store's callback addresses (the spec has no endpoint for it; against
 * the real service they are entered in the store's settings).
 */
export async function pointStoreCallbacks(emulatorUrl: string, storeId: string, urls: { inboundCallbackURL: string; messageStatusURL: string }): Promise<void> {
  const response = await fetch(`${emulatorUrl}/__emulator/stores/${encodeURIComponent(storeId)}/callbacks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(urls),
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`the messaging emulator refused the callback addresses of store ${storeId} (HTTP ${response.status})`);
}
