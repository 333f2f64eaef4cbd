// A NestJS-style service: interfaces, abstract classes, implements, overloads,
// decorators (TS puts method decorators beside the method, outside its span;
// decorators before `export` sit outside the class span).
import { Injectable, Inject, Logger } from '@nestjs/common';
import type { Repository, FindOptions } from 'typeorm';
import { type Cache, CACHE_MANAGER } from './cache';
import * as events from './events';
import crypto = require('crypto');
import Config = AppConfig.Settings;
export type { UserDto } from './dto/user.dto';
export * from './user.errors';

export interface Identifiable {
  id: string;
}

export interface Entity<T> extends Identifiable, events.Emitter<T> {
  createdAt: Date;
  validate(): boolean;
  toJSON(): Record<string, unknown>;
  onChange: (field: keyof T) => void;
  new (id: string): Entity<T>;
  (lookup: string): T;
}

export type UserId = string & { readonly brand: unique symbol };

type Handler = {
  handle(event: string): void;
};

export enum Role {
  Admin = 'admin',
  Member = 'member',
  Guest = computeGuestRole(),
}

const enum Flags {
  None = 0,
  Verified = 1 << 0,
}

export abstract class BaseRepository<T extends Identifiable> implements Iterable<T> {
  protected readonly logger = new Logger(this.constructor.name);
  protected items = new Map<string, T>();

  protected abstract tableName(): string;
  abstract validate(entity: T): Promise<boolean>;

  async save(entity: T): Promise<T> {
    if (!(await this.validate(entity))) {
      throw new ValidationError(this.tableName(), entity.id);
    }
    this.items.set(entity.id, entity);
    return entity;
  }

  *[Symbol.iterator](): Iterator<T> {
    yield* this.items.values();
  }
}

@Injectable()
export class UserService extends BaseRepository<User> implements Handler, events.Listener {
  private static instances = 0;
  #secret: string;

  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    private readonly repo: Repository<User>,
  ) {
    super();
    UserService.instances++;
    this.#secret = crypto.randomBytes(16).toString('hex');
  }

  protected tableName(): string {
    return 'users';
  }

  async validate(user: User): Promise<boolean> {
    return user.email?.includes('@') ?? false;
  }

  find(id: string): Promise<User | undefined>;
  find(options: FindOptions<User>): Promise<User[]>;
  async find(arg: string | FindOptions<User>): Promise<User | User[] | undefined> {
    if (typeof arg === 'string') {
      const cached = await this.cache.get<User>(arg);
      return cached ?? this.repo.findOne({ where: { id: arg } });
    }
    return this.repo.find(arg);
  }

  @events.On('user.deleted')
  handle(event: string): void {
    this.logger.log(`handled ${event}`);
    this.invalidate(event);
  }

  private invalidate = async (key: string): Promise<void> => {
    await this.cache.del(key);
  };

  get secret(): string {
    return this.#secret;
  }

  set secret(value: string) {
    this.#secret = hash(value);
  }

  #rotate(): void {
    this.secret = crypto.randomUUID();
  }
}

class ValidationError extends Error {
  constructor(table: string, id: string) {
    super(`invalid ${table} row ${id}`);
  }
}

function hash(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

function computeGuestRole(): 'guest' {
  return 'guest';
}

export const createService = (cache: Cache, repo: Repository<User>): UserService =>
  new UserService(cache, repo);

export const loadConfig = (): Config => require('./config.json') as Config;
