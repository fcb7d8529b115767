/**
 * A virtual machine for what this machine's own kernel cannot do: it is built without quota
 * support, and central's host holds each tenant's volumes to their sizes with XFS project
 * quotas. The VM runs Debian's kernel (built, like AL2023's, with XFS quotas) from the package
 * install-tools pins in .tools/kernel, under QEMU's emulator: no network device at all, this
 * machine's root file system shared read-only over 9p (its tools and Python, as the host's
 * own), one raw disk. An initramfs made here from busybox loads the modules, mounts the share
 * and runs one script as root in it; the console is the script's output, its last line the
 * exit code. The VM powers off when the script ends.
 */
import * as fs from "fs";
import * as path from "path";
import { run } from "./processes";

/** Where install-tools unpacks the kernel package, under the project root. */
export const KERNEL_DIR = path.join(".tools", "kernel");
/** install-tools' stamp: the package and version on the first line, the kernel's release on the second. */
const STAMP = ".clusterra-stamp";
/** Modules the VM loads, in order (their dependencies come from modules.dep): virtio's PCI transport and disk, 9p over virtio, XFS and the CRC32C it checksums with. */
const MODULES = ["crc32c_generic", "virtio_pci", "virtio_blk", "9pnet_virtio", "9p", "xfs"] as const;
/** The statically linked busybox of Debian's busybox-static: the initramfs's shell and mount. */
const BUSYBOX = "/usr/bin/busybox";
/** What the console prints before the script, and after it with its exit code. */
const START_MARK = "clusterra-vm-start";
const EXIT_MARK = "clusterra-vm-exit";

export interface VmKernel {
  readonly vmlinuz: string;
  readonly modules: string;
  /** The package it came from (`linux-image-6.1.0-56-amd64 6.1.192-2`). */
  readonly version: string;
}

/** The kernel install-tools unpacked, or why there is none. Pure but for reading the stamp. */
export function findVmKernel(root: string): { kernel?: VmKernel; missing?: string } {
  const dir = path.resolve(root, KERNEL_DIR);
  let stamp: string[];
  try {
    stamp = fs.readFileSync(path.join(dir, STAMP), "utf8").split("\n");
  } catch {
    return { missing: `the VM kernel ${dir} is not unpacked: run \`sudo bash scripts/install-tools\`` };
  }
  const release = stamp[1]?.trim() ?? "";
  const kernel = { vmlinuz: path.join(dir, "boot", `vmlinuz-${release}`), modules: path.join(dir, "lib", "modules", release), version: stamp[0]?.trim() ?? "" };
  if (!fs.existsSync(kernel.vmlinuz) || !fs.existsSync(path.join(kernel.modules, "modules.dep"))) return { missing: `${dir} lacks vmlinuz-${release} or its modules.dep: run \`sudo bash scripts/install-tools\`` };
  if (!fs.existsSync(BUSYBOX)) return { missing: `no ${BUSYBOX}: run \`sudo bash scripts/install-tools\` (Debian's busybox-static)` };
  return { kernel };
}

/** The modules to load for `wanted`, each after its dependencies, from modules.dep's text. Pure. */
export function moduleOrder(modulesDep: string, wanted: readonly string[]): string[] {
  const deps = new Map<string, string[]>();
  for (const line of modulesDep.split("\n")) {
    const [file, rest] = line.split(":");
    if (file && rest !== undefined) deps.set(file.trim(), rest.trim().split(/\s+/).filter(Boolean));
  }
  const byName = new Map([...deps.keys()].map((f) => [path.basename(f).replace(/\.ko(\.xz|\.zst)?$/, "").replace(/-/g, "_"), f]));
  const order: string[] = [];
  const visit = (file: string) => {
    if (order.includes(file)) return;
    for (const d of deps.get(file) ?? []) visit(d);
    order.push(file);
  };
  for (const w of wanted) {
    const file = byName.get(w.replace(/-/g, "_"));
    if (!file) throw new Error(`module ${w} is not in the kernel's modules.dep`);
    visit(file);
  }
  return order;
}

/** The initramfs's /init: mounts, modules by file (insmod, in dependency order), the share, then the script. Pure. */
export function vmInit(modules: readonly string[]): string {
  return [
    "#!/bin/busybox sh",
    "/bin/busybox --install -s /bin",
    "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev",
    ...modules.map((m) => `insmod /modules/${path.basename(m)} || echo "insmod ${path.basename(m)} failed"`),
    "mount -t 9p -o trans=virtio,version=9p2000.L,ro host /host || echo 'the machine share did not mount'",
    "for d in proc sys dev; do mount --bind /$d /host/$d; done",
    // A writable /run and /var/lib over the read-only share, as a host has them: the script's copy, mount points (the machine's /tmp stays readable).
    "mount -t tmpfs run /host/run; mount -t tmpfs varlib /host/var/lib",
    "cp /script /host/var/lib/clusterra-vm-script",
    `echo ${START_MARK}`,
    "chroot /host /bin/bash /var/lib/clusterra-vm-script",
    `echo "${EXIT_MARK} $?"`,
    "poweroff -f",
    "",
  ].join("\n");
}

/** A cpio "newc" archive of regular files and directories (what the kernel unpacks as its initramfs). Pure. */
export function cpioNewc(entries: readonly { name: string; mode: number; data?: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  const pad = (n: number) => Buffer.alloc((4 - (n % 4)) % 4);
  const header = (name: string, mode: number, size: number, ino: number) => {
    const fields = [ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, name.length + 1, 0].map((v) => v.toString(16).padStart(8, "0")).join("");
    const h = Buffer.from(`070701${fields}${name}\0`, "latin1");
    return Buffer.concat([h, pad(h.length)]);
  };
  entries.forEach((e, i) => {
    const data = e.data ?? Buffer.alloc(0);
    parts.push(header(e.name, e.mode, data.length, i + 1), data, pad(data.length));
  });
  parts.push(header("TRAILER!!!", 0, 0, 0));
  return Buffer.concat(parts);
}

export interface VmRun {
  readonly code: number | undefined;
  readonly output: string;
  readonly ms: number;
}

/**
 * Boots the VM with `disk` as its one disk (/dev/vda) and runs `script` (bash) as root in the
 * machine's shared root. `dir` takes the initramfs. Never a network device: `-nic none`.
 */
export async function runInVm(o: { kernel: VmKernel; disk: string; script: string; dir: string; timeoutMs: number; memoryMiB?: number }): Promise<VmRun> {
  const dep = fs.readFileSync(path.join(o.kernel.modules, "modules.dep"), "utf8");
  const modules = moduleOrder(dep, MODULES);
  const dirs = ["bin", "proc", "sys", "dev", "host", "modules"].map((name) => ({ name, mode: 0o40755 }));
  const files = [
    { name: "bin/busybox", mode: 0o100755, data: fs.readFileSync(BUSYBOX) },
    { name: "init", mode: 0o100755, data: Buffer.from(vmInit(modules)) },
    { name: "script", mode: 0o100644, data: Buffer.from(o.script) },
    ...modules.map((m) => ({ name: `modules/${path.basename(m)}`, mode: 0o100644, data: fs.readFileSync(path.join(o.kernel.modules, m)) })),
  ];
  fs.mkdirSync(o.dir, { recursive: true });
  const initrd = path.join(o.dir, "initrd.cpio");
  fs.writeFileSync(initrd, cpioNewc([...dirs, ...files]));
  const r = await run(
    [
      "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", String(o.memoryMiB ?? 1024), "-smp", "2",
      "-nographic", "-no-reboot", "-nic", "none",
      "-kernel", o.kernel.vmlinuz, "-initrd", initrd, "-append", "console=ttyS0 quiet panic=-1",
      "-drive", `file=${o.disk},if=virtio,format=raw`,
      "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
    ],
    { timeoutMs: o.timeoutMs },
  );
  // The console's lines, without the firmware's screen control sequences and carriage returns.
  const output = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1bc/g, "").replace(/\r/g, "");
  const m = new RegExp(`${START_MARK}\n([\\s\\S]*?)^${EXIT_MARK} (\\d+)$`, "m").exec(output);
  return { code: m ? Number(m[2]) : undefined, output: m ? m[1].trim() : `${output}\n${r.stderr}`.trim(), ms: r.ms };
}
