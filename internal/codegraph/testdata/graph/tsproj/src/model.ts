export interface Entity {
  id: string;
  validate(): boolean;
}

export abstract class Base implements Entity {
  constructor(public id: string) {}
  abstract validate(): boolean;
  toJSON(): object {
    return { id: this.id, valid: this.validate() };
  }
}

export class User extends Base {
  validate(): boolean {
    return this.id.length > 0;
  }
}
