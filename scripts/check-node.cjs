// Plain CommonJS so that it runs, and says one clear line, on the old Node it
// guards against. npm runs every script with the Node 24 that `npm install`
// put in node_modules/.bin (the `node` dependency); this catches a script
// started some other way.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `Folio needs Node 24; this is Node ${process.versions.node}. Run it through npm (npm start, npm test, npm run folio), which uses node_modules/.bin/node (v24) after npm install.`,
  );
  process.exit(1);
}
