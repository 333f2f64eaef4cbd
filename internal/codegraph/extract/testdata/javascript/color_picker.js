// A web component: export default class {} is named "default"; decorators
// are part of the class and method spans as tree-sitter gives them.
import { customElement, property, observe } from './decorators.js';
import { html, render } from 'lit-html';

function clamp(value, min, max) {
  return Math.min(Math.max(value, min), max);
}

@customElement('color-picker')
export default class extends HTMLElement {
  @property({ type: Number })
  hue = 0;

  @observe('hue')
  hueChanged(next, prev) {
    this.dispatchEvent(new CustomEvent('change', { detail: { next, prev } }));
    this.update();
  }

  connectedCallback() {
    this.attachShadow({ mode: 'open' });
    this.update();
  }

  update() {
    render(html`<input type="range" .value=${clamp(this.hue, 0, 360)} />`, this.shadowRoot);
  }
}

// A redefinition keeps both: the second is clamp#2.
function clamp(value) {
  return value;
}

export function toHex(rgb) {
  const pad = (n) => n.toString(16).padStart(2, '0');
  return '#' + rgb.map(pad).join('');
}

window.ColorUtils = {
  toHex,
  lighten(hex, amount) {
    return toHex(hexToRgb(hex).map((c) => clamp(c + amount, 0, 255)));
  },
};

function hexToRgb(hex) {
  const m = /^#?([a-f\d]{2})([a-f\d]{2})([a-f\d]{2})$/i.exec(hex);
  return m ? m.slice(1).map((h) => parseInt(h, 16)) : null;
}
