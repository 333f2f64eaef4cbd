import json

from app.util.strings import slugify


class Base:
    def save(self):
        return json.dumps(self.__dict__)


class User(Base):
    def __init__(self, name):
        self.name = name
        self.slug = slugify(name)

    def rename(self, name):
        self.name = name
        self.save()

    @property
    def display(self):
        return self.name.title()


def make_user(name):
    u = User(name)
    u.rename(name)
    return u
