/**
 * MQTT.js settings shared by the server's device channel and the simulated fleet (Node only). Typed by
 * the shape they use, so that the contract does not depend on MQTT.js.
 */

/** The part of an MQTT.js client that `corkPerTurn` uses. */
interface PacketSource {
  on(event: 'packetreceive', listener: () => void): unknown;
  readonly stream?: unknown;
}

type Corkable = { cork?: () => void; uncork?: () => void } | undefined;

/**
 * Writes what the client sends while handling the packets of one read (their acknowledgements, the
 * messages they lead to) together at the end of that turn of the event loop: one system call instead
 * of one per packet, which under a stream of acknowledgements is most of a connection's cost.
 */
export function corkPerTurn(client: PacketSource): void {
  let corked = false;
  client.on('packetreceive', () => {
    const stream = client.stream as Corkable;
    if (corked || typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    stream.cork();
    corked = true;
    setImmediate(() => {
      corked = false;
      stream.uncork?.();
    });
  });
}

/**
 * MQTT.js traces every packet through `debug` even when nobody listens (1.4 % of the server's CPU in a
 * 100,000-IMEI batch): no tracer unless DEBUG asks for one.
 */
export function mqttTracing(): { log?: () => void } {
  return process.env.DEBUG ? {} : { log: () => {} };
}
