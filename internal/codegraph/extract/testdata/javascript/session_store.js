'use strict';

// A CommonJS module in the style of express-session / connect middleware.
const EventEmitter = require('events');
const { promisify, inspect: show } = require('util');
const debug = require('debug')('session:store');
const crypto = require('crypto'), path = require('path');
const parseUrl = require('parseurl').original;
let redis;
redis = require('redis');
require('./polyfills');

/**
 * Constructor function with prototype methods.
 */
function Store(options) {
  EventEmitter.call(this);
  this.prefix = options.prefix || 'sess:';
  this.ttl = options.ttl;
  this.serialize = function (sess) {
    return JSON.stringify(sess);
  };
  this.client = redis.createClient(options.url);
}

Store.prototype = Object.create(EventEmitter.prototype);

Store.prototype.get = function get(sid, callback) {
  const key = this.prefix + sid;
  debug('GET "%s"', sid);
  this.client.get(key, (err, data) => {
    if (err) return callback(err);
    callback(null, JSON.parse(data));
  });
};

Store.prototype.set = function (sid, sess, callback) {
  this.client.set(this.prefix + sid, this.serialize(sess), callback);
};

Store.prototype.destroy = async function (sid) {
  await promisify(this.client.del).call(this.client, this.prefix + sid);
  this.emit('destroy', sid);
};

Store.create = function (options) {
  return new Store(options);
};

Store.prototype['touch'] = function (sid) {
  return this.client.expire(this.prefix + sid, this.ttl);
};

var Cookie = function Cookie(options) {
  this.path = '/';
  this.maxAge = options && options.maxAge;
};

Cookie.prototype = {
  get expires() {
    return this._expires;
  },
  set expires(date) {
    this._expires = date;
  },
  serialize: function (name, val) {
    return name + '=' + encodeURIComponent(val);
  },
  toJSON() {
    return { path: this.path, expires: this.expires };
  },
};

function generateSid() {
  function randomBytes() {
    return crypto.randomBytes(24);
  }
  return randomBytes().toString('base64').replace(/=+$/, '');
}

const helpers = {
  hash(sess) {
    return crypto.createHash('sha1').update(JSON.stringify(sess), 'utf8').digest('hex');
  },
  paths: {
    join: (...parts) => path.join(...parts),
    normalize(p) {
      return path.normalize(p);
    },
  },
  version: '1.0.0',
  fallback: parseUrl,
};

// IIFE: its functions are not definitions; declarations inside it are.
(function (root) {
  function installGlobal() {
    root.SessionStore = Store;
  }
  installGlobal();
})(this);

const handlers = [];
handlers[0]();
handlers.find((h) => h.name === 'x')?.run();
setTimeout(() => generateSid(), 10);

module.exports = Store;
module.exports.Cookie = Cookie;
module.exports.generateSid = generateSid;
exports.memory = function memoryStore() {
  return new Store({ prefix: 'mem:' });
};
exports.inspectSession = (sess) => show(sess, { depth: 2 });
module.exports.utils = {
  hashAll(list) {
    return list.map(helpers.hash);
  },
};
