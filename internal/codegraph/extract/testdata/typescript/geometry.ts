// Namespaces, modules, declarations and overload signatures.
/// <reference path="./globals.d.ts" />
import { Vector } from './vector';

export namespace Geometry {
  export const EPSILON = 1e-9;

  export interface Shape {
    area(): number;
    perimeter(): number;
  }

  export class Circle implements Shape {
    constructor(public readonly radius: number) {}

    area(): number {
      return Math.PI * this.radius ** 2;
    }

    perimeter(): number {
      return 2 * Math.PI * this.radius;
    }
  }

  export function almostEqual(a: number, b: number): boolean {
    return Math.abs(a - b) < EPSILON;
  }

  export namespace Transform {
    export function scale(s: Shape, k: number): Shape {
      return Object.assign(Object.create(Object.getPrototypeOf(s)), s, { k });
    }
  }
}

namespace Geometry.Units {
  export enum Length {
    Millimetre,
    Metre,
  }
  export const convert = (v: number, from: Length, to: Length): number => v * factor(from, to);
  function factor(from: Length, to: Length): number {
    return from === to ? 1 : from < to ? 1e-3 : 1e3;
  }
}

module Legacy {
  export function area(r: number) {
    return new Geometry.Circle(r).area();
  }
}

// Overloads: every signature is a definition; later ones get #2, #3 in
// source order, the implementation included.
export function distance(a: Vector, b: Vector): number;
export function distance(a: Geometry.Shape, b: Geometry.Shape): number;
export function distance(a: any, b: any): number {
  return Vector.sub(a, b).length();
}

declare function requestAnimationFrame(cb: (t: number) => void): number;
declare function assert(value: unknown): asserts value;
declare function assert(value: unknown, message: string): asserts value;

declare namespace NodeJS {
  interface Global {
    geometry: typeof Geometry;
  }
  function setImmediate(cb: () => void): void;
}

declare class ShapeRegistry {
  register(name: string, shape: Geometry.Shape): void;
  lookup(name: string): Geometry.Shape | undefined;
  static readonly default: ShapeRegistry;
}

// Ambient module augmentations are not definitions of this file: their
// contents are named as if at the top level.
declare module 'three' {
  interface Object3D {
    boundingShape?: Geometry.Shape;
  }
  export function fromShape(s: Geometry.Shape): Object3D;
}

declare global {
  interface Window {
    geometry: typeof Geometry;
  }
}

export default abstract class Solid implements Geometry.Shape {
  abstract volume(): number;
  abstract area(): number;

  perimeter(): number {
    return NaN;
  }

  density(mass: number): number {
    return mass / this.volume();
  }
}
