import fs from "node:fs";
import os from "node:os";

let chosen: string | undefined;

/**
 * The folder for the tests' embedded databases: the memory-backed /dev/shm when there is one
 * with room to spare (each data folder holds some 40 MB that a test writes, copies and deletes,
 * several times faster there than on a disk), else the system's temporary folder.
 * TEST_TMPDIR chooses another.
 */
export function testTmpDir(): string {
  if (chosen) return chosen;
  chosen = process.env.TEST_TMPDIR || os.tmpdir();
  if (!process.env.TEST_TMPDIR) {
    try {
      fs.accessSync("/dev/shm", fs.constants.W_OK);
      const s = fs.statfsSync("/dev/shm");
      if (s.bavail * s.bsize >= 2 * 1024 ** 3) chosen = "/dev/shm";
    } catch {
      // no /dev/shm here: the temporary folder it is
    }
  }
  return chosen;
}
