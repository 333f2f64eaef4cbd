import re


def slugify(text):
    def clean(part):
        return re.sub(r"[^a-z0-9]+", "-", part)

    return clean(text.lower()).strip("-")


def unused():
    return slugify("x")
