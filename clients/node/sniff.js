// A small helper for Node.js clients of the American Sniff service (sniff.v1).
//
// It loads the public contract, proto/sniff/v1/sniff.proto, at run time with
// @grpc/proto-loader, connects (plaintext, or TLS trusting a given CA
// certificate), wraps calls in promises, and reads the google.rpc.ErrorInfo
// that the service attaches to refusals, decoded with the published
// google/rpc protos (clients/node/proto/google/rpc) through protobufjs.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const CONTRACT_ROOT = path.join(__dirname, '..', '..', 'proto');
const GOOGLE_RPC_ROOT = path.join(__dirname, 'proto');
const CALL_DEADLINE_MILLIS = 10_000;
// The metadata that carries the house key (`sniff serve --house-key-file`).
const HOUSE_KEY_HEADER = 'x-sniff-house-key';
// The metadata that carries the arena key (`sniff serve --arena-key-file`).
const ARENA_KEY_HEADER = 'x-sniff-arena-key';

function loadService() {
  const definition = protoLoader.loadSync('sniff/v1/sniff.proto', {
    includeDirs: [CONTRACT_ROOT],
    keepCase: true, // field names as in the .proto
    longs: String,
    enums: String, // enum values by name
    defaults: true, // absent scalars and lists read as 0 / '' / []; absent messages as null
    oneofs: true, // `kind` names the member of a oneof that is set
  });
  return grpc.loadPackageDefinition(definition).sniff.v1.SniffService;
}

// google.rpc.Status and ErrorInfo, from the published protos.
const rpcTypes = (() => {
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => path.join(GOOGLE_RPC_ROOT, target);
  root.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
  return { Status: root.lookupType('google.rpc.Status'), ErrorInfo: root.lookupType('google.rpc.ErrorInfo') };
})();

// A connected client. `tlsCa` is the path of a PEM CA certificate: with it
// the channel speaks TLS (required when the service was started with
// --tls-cert), without it plaintext. `houseKey` is sent with every call.
function connect(address, { tlsCa = null, houseKey = null } = {}) {
  const Service = loadService();
  const credentials = tlsCa
    ? grpc.credentials.createSsl(fs.readFileSync(tlsCa))
    : grpc.credentials.createInsecure();
  const stub = new Service(address, credentials);
  const metadata = () => {
    const m = new grpc.Metadata();
    if (houseKey) m.set(HOUSE_KEY_HEADER, houseKey);
    return m;
  };
  const options = () => ({ deadline: new Date(Date.now() + CALL_DEADLINE_MILLIS) });
  return {
    stub,
    calls: 0,
    // One unary call, as a promise of its reply.
    unary(method, request) {
      this.calls += 1;
      return new Promise((resolve, reject) => {
        stub[method](request, metadata(), options(), (err, reply) => (err ? reject(err) : resolve(reply)));
      });
    },
    // One server-streaming call read to its end, as a promise of every message.
    stream(method, request) {
      this.calls += 1;
      return new Promise((resolve, reject) => {
        const items = [];
        const call = stub[method](request, metadata(), options());
        call.on('data', (item) => items.push(item));
        call.on('error', reject);
        call.on('end', () => resolve(items));
      });
    },
    close() {
      stub.close();
    },
  };
}

// The google.rpc.ErrorInfo of a refused call ({reason, domain, metadata}), or null.
function errorInfo(err) {
  const raw = err && err.metadata && err.metadata.get('grpc-status-details-bin');
  if (!raw || raw.length === 0) return null;
  const status = rpcTypes.Status.decode(Buffer.from(raw[0]));
  for (const detail of status.details) {
    if (detail.type_url.endsWith('/google.rpc.ErrorInfo')) {
      return rpcTypes.ErrorInfo.toObject(rpcTypes.ErrorInfo.decode(detail.value));
    }
  }
  return null;
}

function statusName(code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
}

// Reads `--tls-ca FILE` and `--house-key-file FILE` out of argv; returns the rest.
function parseOptions(argv) {
  const rest = [];
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--tls-ca') options.tlsCa = argv[++i];
    else if (argv[i] === '--house-key-file') options.houseKey = fs.readFileSync(argv[++i], 'utf8').trim();
    else if (argv[i] === '--variant') options.variant = argv[++i];
    else if (argv[i] === '--round-limit') options.roundLimit = Number.parseInt(argv[++i], 10);
    else if (argv[i] === '--arena') options.arena = argv[++i];
    else if (argv[i] === '--arena-key-file') options.arenaKey = fs.readFileSync(argv[++i], 'utf8').trim();
    else if (argv[i] === '--arena-matches') options.arenaMatches = Number.parseInt(argv[++i], 10);
    else rest.push(argv[i]);
  }
  if (!options.tlsCa && process.env.SNIFF_TLS_CA) options.tlsCa = process.env.SNIFF_TLS_CA;
  return { options, rest };
}

module.exports = { connect, errorInfo, statusName, parseOptions, grpc, HOUSE_KEY_HEADER, ARENA_KEY_HEADER };
