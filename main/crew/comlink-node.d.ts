// comlink ships its Node adapter's types as node-adapter.d.ts beside node-adapter.mjs,
// which TypeScript does not pair with the .mjs specifier.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  export interface NodeEndpoint {
    postMessage(message: any, transfer?: any): void;
    on(type: string, listener: (...args: any[]) => void, options?: object): void;
    off(type: string, listener: (...args: any[]) => void, options?: object): void;
    start?: () => void;
  }
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
