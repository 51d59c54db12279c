// Runs under whatever Node the machine has, so it is plain CommonJS: it must
// be able to say "you need Node 24" on the old Node it is guarding against.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `Folio needs Node 24 or newer; this is Node ${process.versions.node}.\n` +
      'Install it with `npm install --prefix .ci/node24 node@24` and put .ci/node24/node_modules/.bin first on PATH (bash .ci/run does this for you).',
  );
  process.exit(1);
}
