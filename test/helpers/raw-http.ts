import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly head: string;
}

/**
 * Sends a hand-written HTTP/1.1 request: the only way to put duplicate or malformed headers on the wire exactly
 * as an attacker would. Resolves with the status line and headers of the answer.
 */
export function rawRequest(port: number, lines: readonly string[], body = ''): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd !== -1) {
        socket.destroy();
        const head = received.slice(0, headEnd);
        resolve({ status: Number(head.split(' ')[1]), head });
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (!received.includes('\r\n\r\n')) reject(new Error(`connection closed before a response: ${received}`));
    });
    socket.write([...lines, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  });
}
