// Preloaded with NODE_OPTIONS="--require <this file>": every server a Node program starts
// listens on 127.0.0.1 only. @modelcontextprotocol/server-everything's Streamable HTTP mode
// has no host option and binds every interface; mcp-chaos keeps everything on loopback.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (first.path === undefined) args[0] = { ...first, host: '127.0.0.1' };
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] === 'string') args[1] = '127.0.0.1';
    else args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
