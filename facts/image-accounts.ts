/**
 * Account and group names the platform's images already hold: Debian's and Ubuntu's base
 * accounts and groups (base-passwd, and what Ubuntu's images add), and the daemons' users the
 * Slurm, login and MariaDB images add. A tenant user taking one would replace the image's own
 * entry in the merged passwd and group files (SlurmUser, sshd's privilege separation, a group
 * that owns files on every pod), so none may be a user's name.
 */
export const IMAGE_ACCOUNT_NAMES = [
  // base-passwd's fixed accounts and groups
  "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "www-data", "backup", "list", "irc", "gnats", "nobody",
  "adm", "tty", "disk", "kmem", "dialout", "fax", "voice", "cdrom", "floppy", "tape", "sudo", "audio", "dip", "operator", "src", "shadow", "utmp", "video",
  "sasl", "plugdev", "staff", "users", "nogroup", "input", "kvm", "render", "sgx", "clock", "netdev", "crontab", "lpadmin",
  // Ubuntu's images
  "ubuntu", "messagebus", "syslog", "uuidd", "tcpdump", "tss", "landscape", "polkitd", "fwupd-refresh", "dnsmasq",
  // the daemons' users of the Slurm, login and MariaDB images
  "slurm", "slurmrestd", "munge", "sshd", "mysql", "mariadb",
] as const;

/** Prefixes the distributions keep for system accounts (systemd's, Debian's `_apt`-style names). */
export const RESERVED_NAME_PREFIXES = ["systemd-", "_"] as const;

/** Whether a name is one of the images' accounts or groups, or in a reserved range of names. Pure. */
export function isImageAccountName(name: string): boolean {
  return (IMAGE_ACCOUNT_NAMES as readonly string[]).includes(name) || RESERVED_NAME_PREFIXES.some((p) => name.startsWith(p));
}
