/** Routing instances: their FIB numbers against the kernel's tables, and the interfaces pinned to each. */
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { DEFAULT_INSTANCE_ID } from './schema.js';

export class RoutingInstances {
  constructor(private readonly context: AppContext, private readonly collections: { instances: CollectionModel; instanceMembers: CollectionModel }) {}

  async createInstance(body: ConfigData): Promise<ConfigObject> {
    const { net_fibs: netFibs } = await this.context.platform.routing.fibs();
    if (Number(body.fib_number) >= netFibs) throw badRequest(`body.fib_number must be below the kernel's ${netFibs} routing tables (see POST /multiwan/enable-fibs)`);
    // Linux tables 253-255 are the kernel's default, main and local tables (FIB 0 already stands for main).
    if (this.context.platform.routing.dialect === 'nftables' && [253, 254, 255].includes(Number(body.fib_number))) {
      throw badRequest('body.fib_number 253, 254 and 255 are the kernel\'s own routing tables (default, main, local) on linux; choose another');
    }
    return this.collections.instances.create({ ...body, status: body.status ?? 'idle' });
  }

  deleteInstance(id: string): void {
    if (id === DEFAULT_INSTANCE_ID) throw conflict('the default routing instance cannot be deleted');
    this.context.store.transaction(() => {
      const instance = this.collections.instances.find(id);
      for (const member of this.collections.instanceMembers.objects().filter((m) => m.data.instance_id === id)) this.context.store.remove('mw_instance_member', member.id);
      this.context.models.assertNotReferenced(instance);
      this.context.store.remove('mw_instance', id);
    });
  }

  members(instanceId: string) {
    this.collections.instances.find(instanceId);
    return this.collections.instanceMembers.objects().filter((m) => m.data.instance_id === instanceId).map((m) => ({ instance_id: instanceId, interface: String(m.data.interface) }));
  }

  /** Pins an interface to an instance's FIB; an interface belongs to one instance at a time. */
  async addMember(instanceId: string, name: string) {
    const instance = this.collections.instances.find(instanceId);
    await this.context.platform.routing.pinInterface(name, Number(instance.data.fib_number));
    this.context.store.transaction(() => {
      for (const member of this.collections.instanceMembers.objects().filter((m) => m.data.interface === name)) this.context.store.remove('mw_instance_member', member.id);
      this.collections.instanceMembers.create({ instance_id: instanceId, interface: name });
    });
    return { instance_id: instanceId, interface: name };
  }

  async removeMember(instanceId: string, name: string): Promise<void> {
    this.collections.instances.find(instanceId);
    const member = this.collections.instanceMembers.objects().find((m) => m.data.instance_id === instanceId && m.data.interface === name);
    if (!member) throw notFound(`interface ${name} is not a member of instance ${instanceId}`);
    await this.context.platform.routing.pinInterface(name, 0);
    this.context.store.remove('mw_instance_member', member.id);
  }

  async fibs() {
    const { net_fibs } = await this.context.platform.routing.fibs();
    return { net_fibs, used: this.collections.instances.objects().map((o) => Number(o.data.fib_number)).sort((a, b) => a - b), simulated: this.context.platform.simulated };
  }

  async enableFibs(fibs: number, reboot: boolean) {
    if ((fibs & (fibs - 1)) !== 0) throw badRequest('body.fibs must be a power of two between 2 and 65536');
    const result = await this.context.platform.routing.enableFibs(fibs, reboot);
    const message = result.already_enabled ? `${result.net_fibs} routing tables already available` : `${result.net_fibs} routing tables enabled${result.reboot_scheduled ? '; reboot scheduled' : ''}`;
    return { message, ...result, simulated: this.context.platform.simulated };
  }
}
