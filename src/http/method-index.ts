import FindMyWay from 'find-my-way';

/**
 * Fastify answers 404 for a known path with the wrong method; this second, method-agnostic index of the
 * same paths lets the not-found handler answer 405 with an Allow header instead.
 */
export class MethodIndex {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true });
  private readonly methodsByPattern = new Map<string, Set<string>>();

  remember(method: string, routerPath: string): void {
    let methods = this.methodsByPattern.get(routerPath);
    if (!methods) {
      methods = new Set();
      this.methodsByPattern.set(routerPath, methods);
      this.router.on('GET', routerPath, () => undefined, { pattern: routerPath });
    }
    methods.add(method);
  }

  allowed(path: string): string[] {
    const found = this.router.find('GET', path);
    const pattern = (found?.store as { pattern?: string } | undefined)?.pattern;
    return pattern ? [...(this.methodsByPattern.get(pattern) ?? [])].sort() : [];
  }
}
