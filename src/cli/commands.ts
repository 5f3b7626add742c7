import type { PrismaClient } from "../generated/prisma/client.js";
import { createApiToken, revokeApiToken } from "../core/access/auth.js";
import { newId } from "../core/ids.js";
import { ROLES, type Role } from "../core/access/roles.js";
import { createOrganization } from "../domains/organizations/organizations.service.js";

/** Admin commands, run in-process by the command line or by the running server on its behalf. */
export type AdminCommand =
  | { command: "bootstrap"; email: string; org: string; name?: string }
  | { command: "member-add"; org: string; email: string; role?: string | null; name?: string }
  | { command: "token-create"; email: string; label?: string }
  | { command: "token-revoke"; token: string };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function userByEmail(prisma: PrismaClient, email: string, name?: string) {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new Error(`--email must be an email address (got "${email}")`);
  // Insert-if-absent in one statement (an upsert with an empty update races with itself).
  await prisma.user.createMany({
    data: [{ id: newId("User"), email: normalized, displayName: name?.trim() || normalized.split("@")[0]! }],
    skipDuplicates: true,
  });
  return prisma.user.findUniqueOrThrow({ where: { email: normalized } });
}

async function orgByIdOrTitle(prisma: PrismaClient, org: string) {
  return (
    (await prisma.organization.findUnique({ where: { id: org } })) ??
    (await prisma.organization.findFirst({ where: { title: org }, orderBy: { createdAt: "asc" } }))
  );
}

export async function runAdminCommand(prisma: PrismaClient, cmd: AdminCommand): Promise<Record<string, unknown>> {
  switch (cmd?.command) {
    case "bootstrap": {
      if (!cmd.org?.trim()) throw new Error("--org is required");
      const user = await userByEmail(prisma, cmd.email ?? "", cmd.name);
      let org = await orgByIdOrTitle(prisma, cmd.org);
      if (!org) org = await createOrganization(prisma, cmd.org, user.id);
      await prisma.member.upsert({
        where: { organizationId_userId: { organizationId: org.id, userId: user.id } },
        update: { role: "admin", disabled: false },
        create: { organizationId: org.id, userId: user.id, role: "admin" },
      });
      const { token } = await createApiToken(prisma, user.id, "bootstrap");
      return { token, user: user.id, organization: org.id };
    }
    case "member-add": {
      const org = await orgByIdOrTitle(prisma, cmd.org ?? "");
      if (!org) throw new Error(`organization "${cmd.org}" not found`);
      const role = cmd.role === undefined ? "read" : cmd.role === null || cmd.role === "guest" ? null : cmd.role;
      if (role !== null && !ROLES.includes(role as Role)) throw new Error(`--role must be one of ${ROLES.join(", ")} or guest`);
      const user = await userByEmail(prisma, cmd.email ?? "", cmd.name);
      await prisma.member.upsert({
        where: { organizationId_userId: { organizationId: org.id, userId: user.id } },
        update: { role: role as Role | null, disabled: false },
        create: { organizationId: org.id, userId: user.id, role: role as Role | null },
      });
      return { user: user.id, organization: org.id, role };
    }
    case "token-create": {
      const user = await prisma.user.findUnique({ where: { email: (cmd.email ?? "").trim().toLowerCase() } });
      if (!user) throw new Error(`no user with email "${cmd.email}"`);
      const { token, id } = await createApiToken(prisma, user.id, cmd.label);
      return { token, id, user: user.id };
    }
    case "token-revoke": {
      if (!cmd.token) throw new Error("--token is required (the token itself or its id)");
      return { revoked: await revokeApiToken(prisma, cmd.token) };
    }
    default:
      throw new Error(`unknown command "${(cmd as any)?.command}"`);
  }
}
