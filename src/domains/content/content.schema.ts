// Content: GraphQL types, queries and mutations of this area.
export {};
