import type { ComponentChildren } from 'preact';

/** A page: its heading (the area's name) and what it shows. */
export function Page({ title, help, children }: { title: string; help?: string; children: ComponentChildren }) {
  return (
    <div class="page">
      <header class="page-head">
        <h1>{title}</h1>
      </header>
      {help && <p class="help">{help}</p>}
      {children}
    </div>
  );
}
