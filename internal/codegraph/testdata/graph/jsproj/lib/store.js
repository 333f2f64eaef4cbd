const { EventEmitter } = require('events');

class Store extends EventEmitter {
  constructor() {
    super();
    this.items = new Map();
  }

  set(key, value) {
    this.items.set(key, value);
    this.emit('change', key);
  }
}

function createStore() {
  return new Store();
}

module.exports = { Store, createStore };
