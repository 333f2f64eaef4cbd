import { User } from './model';

export namespace Users {
  export function make(id: string): User {
    return new User(id);
  }
}

export function serialize(id: string): string {
  const u = Users.make(id);
  return JSON.stringify(u.toJSON());
}
