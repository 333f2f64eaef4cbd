import app.models as models
from app import User


def run():
    u = models.make_user("Ada")
    other = User("Bob")
    print(u.display, other)
    missing_function()


run()
