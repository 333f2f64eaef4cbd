#!/usr/bin/env python3
"""A small service: imports of every shape, async and decorated functions,
nested definitions, calls on complex expressions."""
from __future__ import annotations

import os
import os.path as osp, sys
import logging.handlers
from . import config
from .utils import retry, timed as timer
from ..core.db import (
    Session,
    engine as db_engine,
)
from .plugins import *

try:
    import ujson as json
except ImportError:
    import json

log = logging.getLogger(__name__)
app = create_app(config.settings())


@app.route("/items/<int:item_id>")
@retry(times=3)
async def get_item(item_id, session=Session()):
    async with session.begin() as tx:
        row = await tx.fetch(item_id)
    return json.dumps(row)


@timer
def handler(event):
    from .auth import check
    check(event)

    def parse(raw):
        return json.loads(raw).get("body")

    class Result:
        def __init__(self, data):
            self.data = data

        def to_dict(self):
            return dict(data=self.data)

    def helper():
        def inner():
            return parse(event["raw"])
        return inner()

    transform = lambda x: x.strip().lower()
    handlers = [parse, helper]
    handlers[0](event)()
    build()().finish()
    " ".join(map(transform, event["words"]))
    return Result(helper()).to_dict()


def handler(event):
    # redefinition: keeps its own node, named handler#2
    return os.path.join(osp.dirname(__file__), event)


def main(argv=None):
    logging.basicConfig(level=os.environ.get("LEVEL", "INFO"))
    for path in sys.argv[1:]:
        print(f"{path}: {handler(path)}")


if __name__ == "__main__":
    main()
