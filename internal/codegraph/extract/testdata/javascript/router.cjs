// module.exports = { … } exports an object literal: its members are top-level names.
const express = require('express');
const { validate } = require('../lib/validate');

function notFound(req, res) {
  res.status(404).json({ error: 'not found' });
}

module.exports = {
  list(req, res) {
    res.json(req.app.locals.db.all());
  },
  create: async (req, res, next) => {
    try {
      validate(req.body);
      const item = await req.app.locals.db.insert(req.body);
      res.status(201).json(item);
    } catch (err) {
      next(err);
    }
  },
  remove: function (req, res) {
    notFound(req, res);
  },
  admin: {
    purge(req, res) {
      req.app.locals.db.clear();
      res.sendStatus(204);
    },
  },
  mount(app) {
    const router = express.Router();
    router.get('/', this.list);
    router.post('/', this.create);
    app.use('/items', router);
    return router;
  },
};
