import os


class Good:
    def ok(self):
        return os.getcwd()

    def missing_colon(self, x)
        return self.ok() + x


def stray_tokens(items):
    total = 0
    for item in items:
        total += item ) * 2
    return compute(total)


class AlsoGood(Good):
    def fine(self):
        self.ok()


def tail():
    print("unclosed"
