// The IANA registries' tables, imported as text (`with { type: 'text' }`) and so embedded in the binary.
declare module '*.csv' {
  const text: string;
  export default text;
}
