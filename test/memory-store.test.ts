import { MemoryStore } from '../src/stores/memory/memory-store.js';
import { runStoreConformance } from './conformance/store-conformance.js';

runStoreConformance('memory', () => Promise.resolve({ store: new MemoryStore() }));
