/**
 * The people the benchmarks fill their databases with: 20 first names and 50 family names, so
 * that 1,000 people have 1,000 different names and a search by name finds a realistic share.
 */
export const FIRST_NAMES = ['Ada', 'Alan', 'Barbara', 'Claude', 'Donald', 'Edsger', 'Frances', 'Grace', 'Hedy', 'John', 'Katherine', 'Ken', 'Leslie', 'Margaret', 'Niklaus', 'Radia', 'Shafi', 'Tim', 'Whitfield', 'Yukihiro'];
export const FAMILY_NAMES = [
  'Allen', 'Backus', 'Berners-Lee', 'Cerf', 'Codd', 'Conway', 'Diffie', 'Dijkstra', 'Engelbart', 'Floyd', 'Goldwasser', 'Hamilton', 'Hamming', 'Hoare', 'Hopper',
  'Johnson', 'Kahan', 'Kahn', 'Karp', 'Kay', 'Knuth', 'Lamarr', 'Lamport', 'Lampson', 'Liskov', 'Lovelace', 'Matsumoto', 'McCarthy', 'Milner', 'Minsky',
  'Naur', 'Newell', 'Perlis', 'Perlman', 'Pnueli', 'Rabin', 'Ritchie', 'Rivest', 'Scott', 'Shamir', 'Shannon', 'Simon', 'Sutherland', 'Tarjan', 'Thompson',
  'Turing', 'Valiant', 'Wirth', 'Yao', 'Zuse',
];

/** Person number n's name. */
export const nameOf = (n: number): string => `${FIRST_NAMES[n % FIRST_NAMES.length]!} ${FAMILY_NAMES[Math.floor(n / FIRST_NAMES.length) % FAMILY_NAMES.length]!}`;

/** A list of names as a PostgreSQL array literal, for filling rows with generate_series. */
export const sqlArray = (names: readonly string[]): string => `array[${names.map((name) => `'${name.replaceAll("'", "''")}'`).join(', ')}]`;
